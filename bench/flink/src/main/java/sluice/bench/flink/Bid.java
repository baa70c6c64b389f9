package sluice.bench.flink;

/** A Nexmark bid. */
public class Bid {
  public long auction;
  public long bidder;
  public long price;
  public String channel;
  public String url;
  public long dateTime;
  public String extra;

  public Bid() {}
}
