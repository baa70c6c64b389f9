package sluice.flinkcompat;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.rest.messages.job.JobDetailsInfo;
import org.apache.flink.runtime.rest.messages.MessageHeaders;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JavaType;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.runtime.rest.util.RestMapperUtils;

/**
 * Every monitoring GET of a running job and of the cluster, parsed into the response type
 * that Flink's own MessageHeaders declare for it (so the type is the one Flink's RestClient
 * would parse into), with the mapper RestClient parses successful answers with.
 */
final class Monitoring {
    private static final String M = "org.apache.flink.runtime.rest.messages.";
    private static final ObjectMapper MAPPER = RestMapperUtils.getFlexibleObjectMapper();

    private Monitoring() {}

    static void run(JobID job) {
        String j = "/jobs/" + job;
        parse("GET /config", "/config", M + "DashboardConfigurationHeaders");
        parse("GET /overview", "/overview", M + "ClusterOverviewHeaders");
        parse("GET /jobs", "/jobs", M + "JobIdsWithStatusesOverviewHeaders");
        parse("GET /jobs/overview", "/jobs/overview", M + "JobsOverviewHeaders");
        parse("GET /applications/overview", "/applications/overview", M + "ApplicationsOverviewHeaders");
        JobDetailsInfo details = (JobDetailsInfo) parse("GET /jobs/:id", j, M + "job.JobDetailsHeaders");
        parse("GET /jobs/:id/plan", j + "/plan", M + "JobPlanHeaders");
        parse("GET /jobs/:id/status", j + "/status", M + "job.JobStatusInfoHeaders");
        parse("GET /jobs/:id/execution-result", j + "/execution-result", M + "job.JobExecutionResultHeaders");
        parse("GET /jobs/:id/accumulators", j + "/accumulators", M + "JobAccumulatorsHeaders");
        parse("GET /jobs/:id/config", j + "/config", M + "JobConfigHeaders");
        parse("GET /jobs/:id/jobmanager/config", j + "/jobmanager/config", M + "job.JobManagerJobConfigurationHeaders");
        parse("GET /jobs/:id/jobmanager/environment", j + "/jobmanager/environment", M + "job.JobManagerJobEnvironmentHeaders");
        parse("GET /jobs/:id/exceptions", j + "/exceptions", M + "JobExceptionsHeaders");
        parse("GET /jobs/:id/metrics", j + "/metrics", M + "job.metrics.JobMetricsHeaders");
        Object stats = parse("GET /jobs/:id/checkpoints", j + "/checkpoints", M + "checkpoints.CheckpointingStatisticsHeaders");
        parse("GET /jobs/:id/checkpoints/config", j + "/checkpoints/config", M + "checkpoints.CheckpointConfigHeaders");
        long checkpointId = -1;
        try {
            JsonNode completed = MAPPER.readTree(Main.get(j + "/checkpoints")).path("latest").path("completed");
            if (completed.has("id")) checkpointId = completed.get("id").asLong();
        } catch (Exception e) {
            // reported by the checks below
        }
        List<String> vertices = new ArrayList<>();
        if (details != null) for (JobDetailsInfo.JobVertexDetailsInfo v : details.getJobVertexInfos()) vertices.add(v.getJobVertexID().toString());
        if (checkpointId < 0 || stats == null) {
            Main.check("GET /jobs/:id/checkpoints/details/:cid", () -> {
                throw new AssertionError("no completed checkpoint in /jobs/:id/checkpoints");
            });
        } else {
            parse("GET /jobs/:id/checkpoints/details/:cid", j + "/checkpoints/details/" + checkpointId, M + "checkpoints.CheckpointStatisticDetailsHeaders");
            if (!vertices.isEmpty()) {
                parse("GET /jobs/:id/checkpoints/details/:cid/subtasks/:vid", j + "/checkpoints/details/" + checkpointId + "/subtasks/" + vertices.get(0), M + "checkpoints.TaskCheckpointStatisticsHeaders");
            }
        }
        if (vertices.isEmpty()) {
            Main.check("GET /jobs/:id/vertices/*", () -> {
                throw new AssertionError("no vertices from /jobs/:id");
            });
        } else {
            String v = j + "/vertices/" + vertices.get(0);
            parse("GET /jobs/:id/vertices/:vid", v, M + "JobVertexDetailsHeaders");
            parse("GET /jobs/:id/vertices/:vid/subtasks/0", v + "/subtasks/0", M + "job.SubtaskCurrentAttemptDetailsHeaders");
            parse("GET /jobs/:id/vertices/:vid/subtasktimes", v + "/subtasktimes", M + "SubtasksTimesHeaders");
            parse("GET /jobs/:id/vertices/:vid/taskmanagers", v + "/taskmanagers", M + "JobVertexTaskManagersHeaders");
            parse("GET /jobs/:id/vertices/:vid/backpressure", v + "/backpressure", M + "JobVertexBackPressureHeaders");
            parse("GET /jobs/:id/vertices/:vid/watermarks", v + "/watermarks", M + "job.metrics.JobVertexWatermarksHeaders");
            parse("GET /jobs/:id/vertices/:vid/metrics", v + "/metrics", M + "job.metrics.JobVertexMetricsHeaders");
            parse("GET /jobs/:id/vertices/:vid/subtasks/metrics", v + "/subtasks/metrics", M + "job.metrics.AggregatedSubtaskMetricsHeaders");
            parse("GET /jobs/:id/vertices/:vid/accumulators", v + "/accumulators", M + "JobVertexAccumulatorsHeaders");
        }
        Object tms = parse("GET /taskmanagers", "/taskmanagers", M + "taskmanager.TaskManagersHeaders");
        String tm = null;
        try {
            JsonNode list = MAPPER.readTree(Main.get("/taskmanagers")).path("taskmanagers");
            if (list.size() > 0) tm = list.get(0).path("id").asText();
        } catch (Exception e) {
            // reported above
        }
        if (tm != null && tms != null) parse("GET /taskmanagers/:tmid", "/taskmanagers/" + tm, M + "taskmanager.TaskManagerDetailsHeaders");
        parse("GET /jobmanager/config", "/jobmanager/config", M + "ClusterConfigurationInfoHeaders");
        parse("GET /jobmanager/environment", "/jobmanager/environment", M + "JobManagerEnvironmentHeaders");
        parse("GET /jobmanager/metrics", "/jobmanager/metrics", M + "job.metrics.JobManagerMetricsHeaders");
    }

    /** GET `path` and parse it into the response type of `headersClass`; skipped where this Flink version has no such headers. */
    static Object parse(String name, String path, String headersClass) {
        MessageHeaders<?, ?, ?> headers;
        try {
            Class<?> c = Class.forName(headersClass);
            Object h;
            try {
                h = c.getMethod("getInstance").invoke(null);
            } catch (NoSuchMethodException e) {
                h = c.getField("INSTANCE").get(null);
            }
            headers = (MessageHeaders<?, ?, ?>) h;
        } catch (ClassNotFoundException e) {
            Main.skip(name, "(this Flink version has no " + headersClass.substring(headersClass.lastIndexOf('.') + 1) + ")");
            return null;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        Object[] result = {null};
        Main.check(name, () -> {
            String body = Main.get(path);
            JavaType type = headers.getResponseTypeParameters().isEmpty()
                    ? MAPPER.constructType(headers.getResponseClass())
                    : MAPPER.getTypeFactory().constructParametricType(headers.getResponseClass(), headers.getResponseTypeParameters().stream().map(MAPPER::constructType).toArray(JavaType[]::new));
            result[0] = Main.parseInto(body, type);
            return "-> " + headers.getResponseClass().getSimpleName();
        });
        return result[0];
    }
}
