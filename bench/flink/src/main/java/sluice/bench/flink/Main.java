package sluice.bench.flink;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.graph.StreamGraph;

/**
 * Runs Nexmark queries on a local Flink cluster in this JVM (one MiniCluster, one TaskManager
 * with 2 slots, started once), one after the other, on events preloaded once. Commands, one a line on stdin; one JSON line on stdout each:
 *
 *   load <events file>                     preloads the events (bench/nexmark/events-file.js)
 *   run <query> <parallelism> <side input file|-> <output file|digest|-> [<q10's files directory>]
 *       runs the query; with an output file, writes its normalized lines there (unsorted); with
 *       `digest`, reports the digest of its lines (Digest.java); otherwise the records go into a
 *       counting sink: the timed run
 *   quit
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      String[] cmd = line.trim().split(" ");
      try {
        switch (cmd[0]) {
          case "load" -> {
            long t0 = System.nanoTime();
            int n = Preloaded.load(cmd[1]);
            out.println("{\"loaded\":" + n + ",\"ms\":" + (System.nanoTime() - t0) / 1_000_000 + "}");
          }
          case "run" -> out.println(run(cmd[1], Integer.parseInt(cmd[2]), cmd[3].equals("-") ? null : cmd[3], cmd[4].equals("-") ? null : cmd[4], cmd.length > 5 && !cmd[5].equals("-") ? cmd[5] : null));
          case "quit" -> {
            if (cluster != null) cluster.close();
            return;
          }
          default -> throw new IllegalArgumentException("unknown command '" + cmd[0] + "' (load, run, quit)");
        }
      } catch (Throwable e) {
        Throwable root = e;
        while (root.getCause() != null) root = root.getCause();
        out.println("{\"error\":" + quote(e + " / " + root) + "}");
      }
    }
  }

  /** One MiniCluster (one TaskManager, 2 slots) for every run, started at the first. */
  private static MiniCluster cluster;

  private static MiniCluster cluster() throws Exception {
    if (cluster == null) {
      Configuration conf = new Configuration();
      conf.set(RestOptions.BIND_PORT, "0");
      cluster = new MiniCluster(new MiniClusterConfiguration.Builder().setConfiguration(conf).setNumTaskManagers(1).setNumSlotsPerTaskManager(2).build());
      cluster.start();
    }
    return cluster;
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  static String run(String name, int parallelism, String sideInput, String outputFile, String filesDir) throws Exception {
    NexmarkQuery query = Queries.ALL.get(name);
    if (query == null) throw new IllegalArgumentException("unknown query " + name + "; known: " + Queries.ALL.keySet());
    Configuration conf = new Configuration();
    // Records pass between chained operators by reference, as in Sluice (Flink copies them by default).
    conf.set(PipelineOptions.OBJECT_REUSE, true);
    StreamExecutionEnvironment env = new StreamExecutionEnvironment(conf);
    env.setParallelism(parallelism);
    DataStream<Event> events = env.fromSource(
        Preloaded.source(parallelism),
        WatermarkStrategy.<Event>forBoundedOutOfOrderness(Duration.ZERO).withTimestampAssigner((e, ts) -> e.timestamp()),
        "nexmark");
    DataStream result = query.build(events, new NexmarkQuery.Options(sideInput, filesDir));
    CountingSink.COUNT.reset();
    LinesSink.LINES.clear();
    Digest.reset();
    boolean digest = "digest".equals(outputFile);
    if (digest) result.sinkTo(new Digest<>(query));
    else if (outputFile != null) result.sinkTo(new LinesSink<>(query));
    else result.sinkTo(new CountingSink<>());
    StreamGraph graph = env.getStreamGraph();
    graph.setJobName(name);
    long cpu0 = processCpuNanos();
    long t0 = System.nanoTime();
    JobExecutionResult r = cluster().executeJobBlocking(graph.getJobGraph());
    long wallMs = (System.nanoTime() - t0) / 1_000_000;
    double cpuSeconds = (processCpuNanos() - cpu0) / 1e9;
    long netMs = r.getNetRuntime(TimeUnit.MILLISECONDS);
    long records;
    if (digest) records = Digest.count();
    else if (outputFile != null) {
      records = LinesSink.LINES.size();
      Files.write(Path.of(outputFile), LinesSink.LINES, StandardCharsets.UTF_8);
      LinesSink.LINES.clear();
    } else records = CountingSink.COUNT.sum();
    int eventCount = Preloaded.count();
    double seconds = Math.max(netMs, 1) / 1000.0;
    return "{\"query\":" + quote(name) + ",\"parallelism\":" + parallelism + ",\"events\":" + eventCount + ",\"seconds\":" + seconds
        + ",\"wallSeconds\":" + wallMs / 1000.0 + ",\"eventsPerSecond\":" + Math.round(eventCount / seconds) + ",\"outputRecords\":" + records + ",\"cpuSeconds\":" + cpuSeconds
        + (digest ? ",\"digest\":" + quote(Digest.value()) : "") + "}";
  }

  /** CPU time of this JVM: every thread, the job's, the garbage collector's and the JIT compiler's. */
  static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }
}
