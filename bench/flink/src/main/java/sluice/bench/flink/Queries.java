package sluice.bench.flink;

import java.util.LinkedHashMap;
import java.util.Map;

/** Every query by name (bench/nexmark/index.js). */
public final class Queries {
  private Queries() {}

  public static final Map<String, NexmarkQuery<?>> ALL = new LinkedHashMap<>();

  static {
    ALL.put("q0", new Q0());
    ALL.put("q1", new Q1());
    ALL.put("q2", new Q2());
    ALL.put("q3", new Q3());
    ALL.put("q4", new Q4());
    ALL.put("q5", new Q5());
    ALL.put("q6", new Q6());
    ALL.put("q7", new Q7());
    ALL.put("q8", new Q8());
    ALL.put("q9", new Q9());
    ALL.put("q10", new Q10());
    ALL.put("q11", new Q11());
    ALL.put("q12", new Q12());
    ALL.put("q13", new Q13());
    ALL.put("q14", new Q14());
    ALL.put("q15", new Q15());
    ALL.put("q16", new Q16());
    ALL.put("q17", new Q17());
    ALL.put("q18", new Q18());
    ALL.put("q19", new Q19());
    ALL.put("q20", new Q20());
    ALL.put("q21", new Q21());
    ALL.put("q22", new Q22());
  }
}
