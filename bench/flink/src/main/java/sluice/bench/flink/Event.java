package sluice.bench.flink;

/** One Nexmark event: exactly one of person, auction, bid is set (as Nexmark's own Event class). */
public class Event {
  public Person person;
  public Auction auction;
  public Bid bid;

  public Event() {}

  public long timestamp() {
    return person != null ? person.dateTime : auction != null ? auction.dateTime : bid.dateTime;
  }

  /** An event of bench/nexmark/events-file.js's tab-separated format. */
  public static Event parse(String line) {
    String[] f = line.split("\t", -1);
    Event e = new Event();
    switch (f[0]) {
      case "P" -> {
        Person p = new Person();
        p.id = Long.parseLong(f[1]);
        p.name = f[2];
        p.emailAddress = f[3];
        p.creditCard = f[4];
        p.city = f[5];
        p.state = f[6];
        p.dateTime = Long.parseLong(f[7]);
        p.extra = f[8];
        e.person = p;
      }
      case "A" -> {
        Auction a = new Auction();
        a.id = Long.parseLong(f[1]);
        a.itemName = f[2];
        a.description = f[3];
        a.initialBid = Long.parseLong(f[4]);
        a.reserve = Long.parseLong(f[5]);
        a.dateTime = Long.parseLong(f[6]);
        a.expires = Long.parseLong(f[7]);
        a.seller = Long.parseLong(f[8]);
        a.category = Long.parseLong(f[9]);
        a.extra = f[10];
        e.auction = a;
      }
      case "B" -> {
        Bid b = new Bid();
        b.auction = Long.parseLong(f[1]);
        b.bidder = Long.parseLong(f[2]);
        b.price = Long.parseLong(f[3]);
        b.channel = f[4];
        b.url = f[5];
        b.dateTime = Long.parseLong(f[6]);
        b.extra = f[7];
        e.bid = b;
      }
      default -> throw new IllegalArgumentException("not a Nexmark event line (P, A or B first): " + line);
    }
    return e;
  }
}
