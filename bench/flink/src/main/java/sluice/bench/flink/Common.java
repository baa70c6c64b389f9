package sluice.bench.flink;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Comparator;
import java.util.StringJoiner;

/** bench/nexmark/common.js in Java: a change there needs the same change here. */
public final class Common {
  private Common() {}

  /** The last watermark of a bounded input: updating queries emit their final result here. */
  public static final long END_OF_INPUT = Long.MAX_VALUE;

  /** Fields of an output line, joined with '|' (JavaScript's `${x}` of each). */
  public static String line(Object... fields) {
    StringJoiner j = new StringJoiner("|");
    for (Object f : fields) j.add(String.valueOf(f));
    return j.toString();
  }

  /** A DECIMAL(23, 3) held as an integer count of thousandths. */
  public static String decimal3(long thousandths) {
    long whole = Math.floorDiv(thousandths, 1000);
    return whole + "." + String.format("%03d", thousandths - whole * 1000);
  }

  public static int priceRank(long price) {
    return price < 10_000 ? 1 : price < 1_000_000 ? 2 : 3;
  }

  private static final long DAY_MS = 86_400_000L;
  private static final DateTimeFormatter HOUR_MINUTE = DateTimeFormatter.ofPattern("HH:mm").withZone(ZoneOffset.UTC);

  public static long dayOf(long ms) {
    return Math.floorDiv(ms, DAY_MS);
  }

  public static String formatDay(long day) {
    return LocalDate.ofEpochDay(day).toString();
  }

  public static String formatHourMinute(long ms) {
    return HOUR_MINUTE.format(Instant.ofEpochMilli(ms));
  }

  /** Highest price first, then the earliest, then the remaining fields (common.js). */
  public static final Comparator<Bid> BY_PRICE_DESC = (a, b) -> {
    if (a.price != b.price) return Long.compare(b.price, a.price);
    if (a.dateTime != b.dateTime) return Long.compare(a.dateTime, b.dateTime);
    return compareRest(a, b);
  };

  /** The latest first, then the highest price, then the remaining fields. */
  public static final Comparator<Bid> BY_TIME_DESC = (a, b) -> {
    if (a.dateTime != b.dateTime) return Long.compare(b.dateTime, a.dateTime);
    if (a.price != b.price) return Long.compare(b.price, a.price);
    return compareRest(a, b);
  };

  private static int compareRest(Bid a, Bid b) {
    if (a.auction != b.auction) return Long.compare(a.auction, b.auction);
    if (a.bidder != b.bidder) return Long.compare(a.bidder, b.bidder);
    int c = a.channel.compareTo(b.channel);
    if (c != 0) return c;
    c = a.url.compareTo(b.url);
    if (c != 0) return c;
    return a.extra.compareTo(b.extra);
  }

  public static String bidLine(Bid b) {
    return line(b.auction, b.bidder, b.price, b.channel, b.url, b.dateTime, b.extra);
  }
}
