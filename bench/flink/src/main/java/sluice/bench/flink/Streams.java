package sluice.bench.flink;

import org.apache.flink.streaming.api.datastream.DataStream;

/** The events of one kind. */
public final class Streams {
  private Streams() {}

  public static DataStream<Bid> bids(DataStream<Event> events) {
    return events.filter(e -> e.bid != null).map(e -> e.bid).returns(Bid.class);
  }

  public static DataStream<Auction> auctions(DataStream<Event> events) {
    return events.filter(e -> e.auction != null).map(e -> e.auction).returns(Auction.class);
  }

  public static DataStream<Person> persons(DataStream<Event> events) {
    return events.filter(e -> e.person != null).map(e -> e.person).returns(Person.class);
  }
}
