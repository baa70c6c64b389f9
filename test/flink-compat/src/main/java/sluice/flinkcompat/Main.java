package sluice.flinkcompat;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.client.cli.CliFrontend;
import org.apache.flink.client.deployment.StandaloneClusterId;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.CheckpointType;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.client.JobStatusMessage;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.rest.messages.job.JobDetailsInfo;
import org.apache.flink.runtime.rest.util.RestMapperUtils;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Flink's own clients against a Sluice cluster: RestClusterClient calls, the `flink` CLI
 * (CliFrontend, in this JVM) and every monitoring response parsed into Flink's response class
 * with the object mapper RestClient parses responses with. One line per check:
 * `PASS name detail` or `FAIL name detail`; `INFO key value` for what the caller checks in
 * Sluice (savepoint paths); exits 1 when a check failed.
 *
 * <p>Arguments (key=value): rest=host:port, running=jobId (monitoring, checkpoints,
 * savepoints, CLI list, then CLI stop --savepointPath), drain=jobId (client stop with drain),
 * cancelCli=jobId, cancelClient=jobId, failed=jobId (a job that failed), finished=jobId (a job
 * that finished), savepointDir=dir.
 */
public final class Main {
    private static final long TIMEOUT_S = 60;
    private static int passed;
    private static int failed;
    private static final ObjectMapper MAPPER = RestMapperUtils.getFlexibleObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static String rest;
    private static final PrintStream OUT = System.out;

    private Main() {}

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = new LinkedHashMap<>();
        for (String s : argv) {
            int i = s.indexOf('=');
            if (i < 0) throw new IllegalArgumentException("arguments are key=value, got " + s);
            a.put(s.substring(0, i), s.substring(i + 1));
        }
        rest = req(a, "rest");
        String host = rest.substring(0, rest.lastIndexOf(':'));
        int port = Integer.parseInt(rest.substring(rest.lastIndexOf(':') + 1));
        Configuration conf = new Configuration();
        conf.set(RestOptions.ADDRESS, host);
        conf.set(RestOptions.PORT, port);
        conf.set(JobManagerOptions.ADDRESS, host);
        conf.set(DeploymentOptions.TARGET, "remote");
        conf.setString("rest.retry.max-attempts", "2");
        conf.setString("client.timeout", "60 s");
        OUT.println("INFO flink-version " + org.apache.flink.runtime.util.EnvironmentInformation.getVersion());
        String savepointDir = req(a, "savepointDir");

        try (RestClusterClient<StandaloneClusterId> client = new RestClusterClient<>(conf, StandaloneClusterId.getInstance())) {
            JobID running = JobID.fromHexString(req(a, "running"));
            clientChecks(client, running, savepointDir);
            Monitoring.run(running);
            if (a.containsKey("finished")) resultChecks(client, JobID.fromHexString(a.get("finished")), false);
            if (a.containsKey("failed")) resultChecks(client, JobID.fromHexString(a.get("failed")), true);
            Cli cli = new Cli(conf, rest);
            cli.run(running, savepointDir);
            if (a.containsKey("drain")) {
                JobID j = JobID.fromHexString(a.get("drain"));
                check("client.stopWithSavepoint.drain", () -> {
                    String p = client.stopWithSavepoint(j, true, savepointDir + "/drain", SavepointFormatType.CANONICAL).get(TIMEOUT_S, TimeUnit.SECONDS);
                    expect(new File(p.replaceFirst("^file:", "")).exists(), "savepoint " + p + " exists");
                    OUT.println("INFO drain-savepoint " + p);
                    JobStatus s = waitTerminal(client, j);
                    expect(s == JobStatus.FINISHED, "job FINISHED after stop --drain, got " + s);
                    return p;
                });
            }
            if (a.containsKey("cancelClient")) {
                JobID j = JobID.fromHexString(a.get("cancelClient"));
                check("client.cancel", () -> {
                    client.cancel(j).get(TIMEOUT_S, TimeUnit.SECONDS);
                    JobStatus s = waitTerminal(client, j);
                    expect(s == JobStatus.CANCELED, "job CANCELED, got " + s);
                    return s.toString();
                });
            }
            if (a.containsKey("cancelCli")) cli.cancel(JobID.fromHexString(a.get("cancelCli")), client);
        }
        OUT.println("SUMMARY passed=" + passed + " failed=" + failed);
        OUT.flush();
        System.exit(failed == 0 ? 0 : 1);
    }

    private static void clientChecks(RestClusterClient<StandaloneClusterId> client, JobID job, String savepointDir) {
        check("client.listJobs", () -> {
            Collection<JobStatusMessage> jobs = client.listJobs().get(TIMEOUT_S, TimeUnit.SECONDS);
            JobStatusMessage m = jobs.stream().filter(j -> j.getJobId().equals(job)).findFirst().orElse(null);
            expect(m != null, "job " + job + " listed among " + jobs.size());
            expect(m.getJobState() == JobStatus.RUNNING, "RUNNING, got " + m.getJobState());
            return jobs.size() + " jobs, " + m.getJobName() + " " + m.getJobState();
        });
        check("client.getJobStatus", () -> {
            JobStatus s = client.getJobStatus(job).get(TIMEOUT_S, TimeUnit.SECONDS);
            expect(s == JobStatus.RUNNING, "RUNNING, got " + s);
            return s.toString();
        });
        check("client.getJobDetails", () -> {
            JobDetailsInfo d = client.getJobDetails(job).get(TIMEOUT_S, TimeUnit.SECONDS);
            expect(d.getJobVertexInfos().size() > 0, "vertices");
            return d.getName() + " " + d.getJobStatus() + " " + d.getJobVertexInfos().size() + " vertices";
        });
        check("client.getClusterOverview", () -> {
            var o = client.getClusterOverview().get(TIMEOUT_S, TimeUnit.SECONDS);
            expect(o.getNumTaskManagersConnected() > 0, "TaskManagers connected");
            return o.getNumTaskManagersConnected() + " TaskManagers, " + o.getNumJobsRunningOrPending() + " running";
        });
        check("client.getAccumulators", () -> {
            Map<String, Object> acc = client.getAccumulators(job, Main.class.getClassLoader()).get(TIMEOUT_S, TimeUnit.SECONDS);
            return acc.size() + " accumulators";
        });
        for (CheckpointType t : new CheckpointType[] {CheckpointType.FULL, CheckpointType.INCREMENTAL}) {
            check("client.triggerCheckpoint." + t, () -> {
                long id = client.triggerCheckpoint(job, t).get(TIMEOUT_S, TimeUnit.SECONDS);
                expect(id > 0, "checkpoint id > 0, got " + id);
                return "checkpoint " + id;
            });
        }
        for (SavepointFormatType f : new SavepointFormatType[] {SavepointFormatType.CANONICAL, SavepointFormatType.NATIVE}) {
            check("client.triggerSavepoint." + f, () -> {
                String p = client.triggerSavepoint(job, savepointDir + "/client-" + f, f).get(TIMEOUT_S, TimeUnit.SECONDS);
                expect(new File(local(p)).isDirectory(), "savepoint directory " + p + " exists");
                OUT.println("INFO savepoint-" + f + " " + p);
                if (f == SavepointFormatType.NATIVE) {
                    client.disposeSavepoint(p).get(TIMEOUT_S, TimeUnit.SECONDS);
                    expect(!new File(local(p)).exists(), "disposed savepoint " + p + " is gone");
                    return p + " (disposed)";
                }
                return p;
            });
        }
        check("client.triggerDetachedSavepoint", () -> {
            String triggerId = client.triggerDetachedSavepoint(job, savepointDir + "/detached", SavepointFormatType.CANONICAL).get(TIMEOUT_S, TimeUnit.SECONDS);
            expect(triggerId.matches("[0-9a-f]{32}"), "trigger id, got " + triggerId);
            return "trigger " + triggerId;
        });
    }

    private static void resultChecks(RestClusterClient<StandaloneClusterId> client, JobID job, boolean expectFailure) {
        String name = expectFailure ? "failed" : "finished";
        check("client.requestJobResult." + name, () -> {
            JobResult r = client.requestJobResult(job).get(TIMEOUT_S, TimeUnit.SECONDS);
            expect(r.getJobId().equals(job), "job id");
            expect(r.isSuccess() != expectFailure, "isSuccess " + r.isSuccess());
            if (expectFailure) {
                expect(r.getSerializedThrowable().isPresent(), "a failure cause");
                String cause = r.getSerializedThrowable().get().getFullStringifiedStackTrace();
                expect(cause.contains("sluice-compat-failure"), "cause names the job's error, got " + cause.split("\n", 2)[0]);
                try {
                    r.toJobExecutionResult(Main.class.getClassLoader());
                    throw new AssertionError("toJobExecutionResult of a failed job throws");
                } catch (org.apache.flink.runtime.client.JobExecutionException expected) {
                    // as Flink's client reports a failed job
                }
                return "cause: " + cause.split("\n", 2)[0];
            }
            var er = r.toJobExecutionResult(Main.class.getClassLoader());
            return "net runtime " + er.getNetRuntime() + " ms, " + er.getAllAccumulatorResults().size() + " accumulators";
        });
        check("client.getJobStatus." + name, () -> {
            JobStatus s = client.getJobStatus(job).get(TIMEOUT_S, TimeUnit.SECONDS);
            expect(s == (expectFailure ? JobStatus.FAILED : JobStatus.FINISHED), "status, got " + s);
            return s.toString();
        });
        check("client.getAccumulators." + name, () -> client.getAccumulators(job).get(TIMEOUT_S, TimeUnit.SECONDS).size() + " accumulators");
        Monitoring.parse("GET /jobs/:id (" + name + ")", "/jobs/" + job, "org.apache.flink.runtime.rest.messages.job.JobDetailsHeaders");
        Monitoring.parse("GET /jobs/:id/execution-result (" + name + ")", "/jobs/" + job + "/execution-result", "org.apache.flink.runtime.rest.messages.job.JobExecutionResultHeaders");
        Monitoring.parse("GET /jobs/:id/exceptions (" + name + ")", "/jobs/" + job + "/exceptions", "org.apache.flink.runtime.rest.messages.JobExceptionsHeaders");
    }

    static JobStatus waitTerminal(RestClusterClient<StandaloneClusterId> client, JobID job) throws Exception {
        long deadline = System.currentTimeMillis() + TIMEOUT_S * 1000;
        JobStatus s = client.getJobStatus(job).get(TIMEOUT_S, TimeUnit.SECONDS);
        while (!s.isGloballyTerminalState() && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
            s = client.getJobStatus(job).get(TIMEOUT_S, TimeUnit.SECONDS);
        }
        return s;
    }

    static String local(String pointer) {
        return pointer.replaceFirst("^file:(//)?", "");
    }

    static String req(Map<String, String> a, String key) {
        String v = a.get(key);
        if (v == null) throw new IllegalArgumentException("missing argument " + key + "=...");
        return v;
    }

    static void expect(boolean ok, String what) {
        if (!ok) throw new AssertionError("expected " + what);
    }

    static void check(String name, Callable<String> body) {
        long t0 = System.nanoTime();
        try {
            String detail = body.call();
            passed++;
            OUT.println("PASS " + name + (detail == null ? "" : " " + oneLine(detail)) + " (" + (System.nanoTime() - t0) / 1_000_000 + " ms)");
        } catch (Throwable t) {
            failed++;
            OUT.println("FAIL " + name + " " + oneLine(describe(t)) + " (" + (System.nanoTime() - t0) / 1_000_000 + " ms)");
        }
        OUT.flush();
    }

    static void skip(String name, String why) {
        OUT.println("SKIP " + name + " " + why);
    }

    static String describe(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (b.length() > 0) b.append(" <- ");
            b.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
            if (c.getCause() == c) break;
        }
        return b.toString();
    }

    static String oneLine(String s) {
        String l = s.replaceAll("\\s+", " ");
        return l.length() > 1500 ? l.substring(0, 1500) + "..." : l;
    }

    static String get(String path) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://" + rest + path)).timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) throw new AssertionError("HTTP " + r.statusCode() + ": " + r.body());
        return r.body();
    }

    /** Parses with Flink's mapper, then lists the fields Flink's class writes that the answer lacks. */
    static Object parseInto(String body, org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JavaType type) throws Exception {
        Object value = MAPPER.readValue(body, type);
        JsonNode given = MAPPER.readTree(body);
        JsonNode flink = MAPPER.valueToTree(value);
        List<String> missing = new ArrayList<>();
        missingFields("", flink, given, missing);
        if (!missing.isEmpty()) throw new AssertionError("parsed, but lacks fields Flink writes: " + String.join(", ", missing.subList(0, Math.min(40, missing.size()))));
        return value;
    }

    private static void missingFields(String at, JsonNode flink, JsonNode given, List<String> out) {
        if (flink == null || given == null) return;
        if (flink.isObject() && given.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = flink.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                String path = at.isEmpty() ? e.getKey() : at + "." + e.getKey();
                if (!given.has(e.getKey())) out.add(path);
                else missingFields(path, e.getValue(), given.get(e.getKey()), out);
            }
        } else if (flink.isArray() && given.isArray()) {
            for (int i = 0; i < Math.min(flink.size(), given.size()); i++) missingFields(at + "[" + i + "]", flink.get(i), given.get(i), out);
        }
    }

    static String capture(Callable<Integer> run, int[] code) throws Exception {
        PrintStream old = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        PrintStream ps = new PrintStream(buf, true, StandardCharsets.UTF_8);
        System.setOut(ps);
        try {
            code[0] = run.call();
        } finally {
            System.setOut(old);
        }
        return buf.toString(StandardCharsets.UTF_8);
    }

    static String find(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        return m.find() ? m.group(1) : null;
    }

    /** The `flink` CLI: CliFrontend with the default command line, pointed at the cluster. */
    static final class Cli {
        private final CliFrontend frontend;
        private final String address;

        Cli(Configuration conf, String address) throws Exception {
            File confDir = java.nio.file.Files.createTempDirectory("flink-conf").toFile();
            confDir.deleteOnExit();
            this.frontend = new CliFrontend(conf, CliFrontend.loadCustomCommandLines(conf, confDir.getPath()));
            this.address = address;
        }

        String run(String what, String... args) throws Exception {
            int[] code = {0};
            String out = capture(() -> frontend.parseAndRun(args), code);
            if (code[0] != 0) throw new AssertionError("flink " + String.join(" ", args) + " exited " + code[0] + ": " + out);
            return out;
        }

        void run(JobID job, String savepointDir) {
            String id = job.toHexString();
            for (String[] flags : new String[][] {{}, {"-r"}, {"-s"}, {"-a"}}) {
                String name = "cli.list" + (flags.length == 0 ? "" : " " + flags[0]);
                check(name, () -> {
                    List<String> args = new ArrayList<>(List.of("list", "-m", address));
                    args.addAll(List.of(flags));
                    String out = run(name, args.toArray(new String[0]));
                    boolean listsRunning = flags.length == 0 || flags[0].equals("-r") || flags[0].equals("-a");
                    expect(out.contains(id) == listsRunning, (listsRunning ? "" : "not ") + "listing " + id + ":\n" + out);
                    return out.lines().filter(l -> l.contains(" : ")).count() + " lines";
                });
            }
            String[] savepoint = {null};
            check("cli.savepoint", () -> {
                String out = run("savepoint", "savepoint", "-m", address, id, savepointDir + "/cli");
                String p = find(out, "Path: (\\S+)");
                expect(p != null && new File(local(p)).isDirectory(), "a savepoint path that exists:\n" + out);
                savepoint[0] = p;
                OUT.println("INFO cli-savepoint " + p);
                return p;
            });
            check("cli.savepoint -d", () -> {
                expect(savepoint[0] != null, "a savepoint from cli.savepoint");
                String out = run("savepoint -d", "savepoint", "-m", address, "-d", savepoint[0]);
                expect(!new File(local(savepoint[0])).exists(), "disposed savepoint " + savepoint[0] + " is gone:\n" + out);
                return "disposed " + savepoint[0];
            });
            check("cli.checkpoint", () -> {
                String out = run("checkpoint", "checkpoint", "-m", address, id);
                String n = find(out, "Checkpoint(?:\\([A-Z]+\\))? (\\d+) ");
                expect(n != null, "a checkpoint id:\n" + out);
                return "checkpoint " + n;
            });
            check("cli.checkpoint --full", () -> {
                String out = run("checkpoint --full", "checkpoint", "-m", address, "--full", id);
                String n = find(out, "Checkpoint(?:\\([A-Z]+\\))? (\\d+) ");
                expect(n != null, "a checkpoint id:\n" + out);
                return "checkpoint " + n;
            });
            check("cli.stop --savepointPath", () -> {
                String out = run("stop", "stop", "-m", address, "--savepointPath", savepointDir + "/stop", id);
                String p = find(out, "Savepoint completed. Path: (\\S+)");
                expect(p != null && new File(local(p)).isDirectory(), "a savepoint path that exists:\n" + out);
                OUT.println("INFO stop-savepoint " + p);
                return p;
            });
        }

        void cancel(JobID job, RestClusterClient<StandaloneClusterId> client) {
            check("cli.cancel", () -> {
                String out = run("cancel", "cancel", "-m", address, job.toHexString());
                JobStatus s = waitTerminal(client, job);
                expect(s == JobStatus.CANCELED, "job CANCELED, got " + s + ":\n" + out);
                return s.toString();
            });
        }
    }
}
