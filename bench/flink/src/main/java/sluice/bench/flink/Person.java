package sluice.bench.flink;

/** A Nexmark person (bench/nexmark/events-file.js, src/connectors/generator/nexmark/nexmark-model.ts). */
public class Person {
  public long id;
  public String name;
  public String emailAddress;
  public String creditCard;
  public String city;
  public String state;
  public long dateTime;
  public String extra;

  public Person() {}
}
