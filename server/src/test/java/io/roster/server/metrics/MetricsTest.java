package io.roster.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.grpc.StatusRuntimeException;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.roster.proto.v1.ListServicesRequest;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.server.http.JsonEnvelope;
import io.roster.server.session.RequestCounters;
import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server's metrics and its Prometheus service discovery over real sockets
 * (docs/observability.md): counters follow what clients do, a limit's refusals are counted by the
 * limit, labels do not grow with services or namespaces, and both routes ask for credentials when
 * auth is on. Values are read from the Prometheus client's own snapshots of the metrics, the same
 * objects {@code GET /metrics} writes out.
 */
class MetricsTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults().startedByTest();

  @TempDir Path dir;

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(TestTime.seconds(10)).build();

  @Test
  void countersFollowRegistrationsPushesAndAConnectionsEnd() throws Exception {
    loopback.start();
    TestSession provider = loopback.session("provider");
    for (int i = 0; i < 5; i++) {
      assertThat(provider.register("svc-" + i, "10.0.0.1", 80 + i).getOk()).isTrue();
    }
    TestSession consumer = loopback.session("consumer");
    consumer.subscribe("svc-0");
    consumer.awaitPush("svc-0", s -> s.getInstancesCount() == 1);
    assertThat(provider.register("svc-0", "10.0.0.2", 80).getOk()).isTrue();
    consumer.awaitPush("svc-0", s -> s.getInstancesCount() == 2);

    assertThat(value("roster_registrations", "kind", "session")).isEqualTo(6);
    assertThat(value("roster_requests", "protocol", "roster", "type", "register", "result", "ok")).isEqualTo(6);
    assertThat(value("roster_requests", "protocol", "roster", "type", "subscribe", "result", "ok")).isEqualTo(1);
    assertThat(value("roster_sessions", "protocol", "roster")).isEqualTo(2);
    assertThat(value("roster_connections", "protocol", "roster")).isEqualTo(2);
    assertThat(value("roster_subscriptions", "protocol", "roster")).isEqualTo(1);
    assertThat(value("roster_instances", "namespace", "public", "kind", "session")).isEqualTo(6);
    assertThat(value("roster_services", "namespace", "public")).isEqualTo(5);
    assertThat(value("roster_pushes", "encoding", "full") + value("roster_pushes", "encoding", "delta"))
        .isEqualTo(2); // the subscription's first state, then the change
    assertThat(value("roster_push_bytes")).isPositive();
    // The change's ack, not the first state's, is timed.
    await().atMost(TestTime.seconds(10)).until(() -> histogramCount("roster_change_to_ack_seconds") == 1);
    // The first state's ack may come after the change was sent, which supersedes it: 1 or 2 acks.
    assertThat(value("roster_push_acks")).isBetween(1.0, 2.0);

    // Roster's unary services count as they end, by Service/Method and status.
    RegistryGrpc.RegistryBlockingStub registry = RegistryGrpc.newBlockingStub(loopback.channel());
    assertThat(registry.listServices(ListServicesRequest.getDefaultInstance()).getServicesCount()).isEqualTo(5);
    assertThatThrownBy(() -> registry.queryInstances(QueryInstancesRequest.getDefaultInstance()))
        .isInstanceOf(StatusRuntimeException.class);
    assertThat(value("roster_requests", "protocol", "roster", "type", "Registry/ListServices", "result", "ok"))
        .isEqualTo(1);
    assertThat(value("roster_requests", "protocol", "roster", "type", "Registry/QueryInstances", "result",
        "invalid_argument")).isEqualTo(1);

    provider.cancel(); // the connection ends: its six instances go, and the subscriber is told
    consumer.awaitPush("svc-0", s -> s.getInstancesCount() == 0);
    await().atMost(TestTime.seconds(10)).untilAsserted(() -> {
      assertThat(value("roster_deregistrations", "kind", "session", "reason", "owner_end")).isEqualTo(6);
      assertThat(value("roster_instances", "namespace", "public", "kind", "session")).isZero();
      assertThat(value("roster_sessions", "protocol", "roster")).isEqualTo(1);
    });
    assertThat(value("roster_deregistrations", "kind", "session", "reason", "request")).isZero();
  }

  @Test
  void aLimitsRefusalIsCountedByTheLimit() throws Exception {
    loopback.start(b -> b.maxInstancesPerService(2));
    TestSession provider = loopback.session("provider");
    assertThat(provider.register("orders", "10.0.0.1", 80).getOk()).isTrue();
    assertThat(provider.register("orders", "10.0.0.2", 80).getOk()).isTrue();
    assertThat(provider.register("orders", "10.0.0.3", 80).getOk()).isFalse();
    assertThat(post("/nacos/v1/ns/instance?serviceName=orders&ip=10.0.0.4&port=80").statusCode()).isEqualTo(429);

    assertThat(value("roster_refusals", "limit", "max_instances_per_service")).isEqualTo(2);
    assertThat(value("roster_requests", "protocol", "roster", "type", "register", "result", "resource_exhausted"))
        .isEqualTo(1);
    assertThat(value("roster_requests", "protocol", "nacos-http", "type", "/nacos/v1/ns/instance", "result",
        "resource_exhausted")).isEqualTo(1);
  }

  @Test
  void labelsDoNotGrowWithServicesOrNamespaces() throws Exception {
    loopback.start();
    for (int i = 0; i < 5; i++) {
      assertThat(post("/nacos/v1/ns/instance?serviceName=s" + i + "&ip=10.0.0.1&port=80").statusCode()).isEqualTo(200);
    }
    get("/metrics"); // a route's path joins the labels once it has been served
    int few = labelSets();
    for (int i = 5; i < 300; i++) {
      assertThat(post("/nacos/v1/ns/instance?serviceName=s" + i + "&ip=10.0.0.1&port=80").statusCode()).isEqualTo(200);
    }
    assertThat(labelSets()).as("label sets after 300 services vs 5").isEqualTo(few);

    // Namespaces: the largest ServerMetrics.MAX_NAMESPACES have a label each, the rest one together.
    for (int n = 0; n < ServerMetrics.MAX_NAMESPACES; n++) {
      post("/nacos/v1/ns/instance?namespaceId=team-" + n + "&serviceName=a&ip=10.0.0.1&port=80");
    }
    int atTheBound = labelSets();
    for (int n = ServerMetrics.MAX_NAMESPACES; n < 3 * ServerMetrics.MAX_NAMESPACES; n++) {
      post("/nacos/v1/ns/instance?namespaceId=team-" + n + "&serviceName=a&ip=10.0.0.1&port=80");
    }
    Set<String> namespaces = new HashSet<>();
    for (DataPointSnapshot p : metric("roster_services").getDataPoints()) {
      namespaces.add(p.getLabels().get("namespace"));
    }
    assertThat(namespaces).hasSize(ServerMetrics.MAX_NAMESPACES + 1).contains("public", ServerMetrics.OTHER_NAMESPACES);
    assertThat(value("roster_services", "namespace", ServerMetrics.OTHER_NAMESPACES))
        .isEqualTo(2 * ServerMetrics.MAX_NAMESPACES + 1); // the 41 smallest namespaces of one service each
    assertThat(labelSets()).as("label sets with 61 namespaces vs 21").isEqualTo(atTheBound);

    // A path nobody serves is counted under its route, not by its own name; so is a made-up path
    // under a route that refuses it (a console file's, the metrics').
    for (int i = 0; i < 20; i++) {
      get("/nacos/v1/ns/no-such-" + i);
      assertThat(get("/metrics/made-up-" + i).statusCode()).isEqualTo(404);
    }
    // The two routes' 404s, one more label set each, and the Nacos route's first duration (the
    // metrics route's was observed before).
    assertThat(labelSets()).isEqualTo(atTheBound + 3);
    assertThat(value("roster_requests", "protocol", "nacos-http", "type", "/nacos/v1/ns", "result", "not_found"))
        .isEqualTo(20);
  }

  @Test
  void theExpositionIsPrometheusTextOrOpenMetricsAsAsked() throws Exception {
    loopback.start();
    HttpResponse<String> text = get("/metrics");
    assertThat(text.statusCode()).isEqualTo(200);
    assertThat(text.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
        .startsWith("text/plain; version=0.0.4"));
    assertThat(text.body()).contains("# TYPE roster_registrations_total counter", "jvm_memory_used_bytes{area=\"heap\"}",
        "process_cpu_seconds_total", "roster_build_info{version=\"");

    HttpResponse<String> open = http.send(HttpRequest.newBuilder(uri("/metrics"))
        .header("Accept", "application/openmetrics-text; version=1.0.0; charset=utf-8").build(), BodyHandlers.ofString());
    assertThat(open.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
        .startsWith("application/openmetrics-text"));
    assertThat(open.body()).endsWith("# EOF\n");
    assertThat(post("/metrics").statusCode()).isEqualTo(405);
  }

  @Test
  void theDataDirectorysSizeAndItsFileSystemsSpaceAreShownWhenThereIsOne() throws Exception {
    loopback.start();
    assertThat(get("/metrics").body()).doesNotContain("roster_data_dir_");
    loopback.close();

    Path data = dir.resolve("data");
    loopback.start(b -> b.dataDir(data));
    assertThat(post("/nacos/v1/ns/instance?serviceName=db&ip=10.0.0.1&port=5432&ephemeral=false").statusCode())
        .isEqualTo(200);
    String body = get("/metrics").body();
    long files;
    try (var walk = java.nio.file.Files.walk(data)) {
      files = walk.filter(java.nio.file.Files::isRegularFile).mapToLong(f -> f.toFile().length()).sum();
    }
    assertThat(files).isGreaterThan(0);
    assertThat(gauge(body, "roster_data_dir_bytes")).isEqualTo(files);
    java.nio.file.FileStore store = java.nio.file.Files.getFileStore(data);
    assertThat(gauge(body, "roster_data_dir_total_bytes")).isEqualTo(store.getTotalSpace());
    assertThat(gauge(body, "roster_data_dir_free_bytes")).isPositive().isLessThanOrEqualTo(store.getTotalSpace());
  }

  /** The value of the unlabelled gauge {@code name} in a Prometheus text scrape. */
  private static long gauge(String scrape, String name) {
    return scrape.lines().filter(l -> l.startsWith(name + " ")).map(l -> (long) Double.parseDouble(l.substring(name.length() + 1)))
        .findFirst().orElseThrow(() -> new AssertionError(name + " not in the scrape"));
  }

  @Test
  void discoveryListsEveryInstanceWithItsLabels() throws Exception {
    loopback.start();
    assertThat(post("/nacos/v1/ns/instance?serviceName=orders&ip=10.0.0.1&port=9100&clusterName=east"
        + "&metadata=%7B%22zone%22%3A%22z-1%22%2C%22app.version%22%3A%222.1%22%7D").statusCode()).isEqualTo(200);
    assertThat(post("/nacos/v1/ns/instance?serviceName=orders&ip=10.0.0.2&port=9100&enabled=false").statusCode())
        .isEqualTo(200);
    assertThat(post("/nacos/v1/ns/instance?serviceName=billing&groupName=pay&ip=10.0.0.3&port=9100").statusCode())
        .isEqualTo(200);

    HttpResponse<String> all = get(MetricsApi.SD_PATH + "?namespace=public");
    assertThat(all.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
        .startsWith("application/json"));
    JsonNode groups = JsonEnvelope.JSON.readTree(all.body());
    assertThat(targets(groups)).containsExactly("10.0.0.1:9100", "10.0.0.2:9100", "10.0.0.3:9100");
    JsonNode east = groups.get(0).get("labels");
    assertThat(east.get("__meta_roster_service").asText()).isEqualTo("orders");
    assertThat(east.get("__meta_roster_group").asText()).isEqualTo("DEFAULT_GROUP");
    assertThat(east.get("__meta_roster_namespace").asText()).isEqualTo("public");
    assertThat(east.get("__meta_roster_cluster").asText()).isEqualTo("east");
    assertThat(east.get("__meta_roster_healthy").asText()).isEqualTo("true");
    assertThat(east.get("__meta_roster_metadata_zone").asText()).isEqualTo("z-1");
    assertThat(east.get("__meta_roster_metadata_app_version").asText()).isEqualTo("2.1");
    assertThat(groups.get(1).get("labels").get("__meta_roster_enabled").asText()).isEqualTo("false");

    JsonNode orders = JsonEnvelope.JSON.readTree(get(MetricsApi.SD_PATH + "?service=orders&metadata=zone").body());
    assertThat(targets(orders)).containsExactly("10.0.0.1:9100", "10.0.0.2:9100");
    assertThat(orders.get(0).get("labels").has("__meta_roster_metadata_app_version")).isFalse();
    assertThat(targets(JsonEnvelope.JSON.readTree(get(MetricsApi.SD_PATH + "?group=pay").body())))
        .containsExactly("10.0.0.3:9100");
    assertThat(get(MetricsApi.SD_PATH + "?namespace=nobody").body()).isEqualTo("[]");
  }

  @Test
  void withAuthMetricsNeedReadOnEveryNamespaceAndDiscoveryReadOnWhatItLists() throws Exception {
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json"));
    String prometheus = auth.token("prometheus", "read@*");
    String team = auth.token("team", "read@team");
    loopback.start(b -> b.authFile(auth.path()));

    assertThat(get("/metrics").statusCode()).isEqualTo(403);
    HttpResponse<String> narrow = get("/metrics", team);
    assertThat(narrow.statusCode()).isEqualTo(403);
    assertThat(narrow.body()).contains("read on every namespace");
    assertThat(get("/metrics", prometheus).statusCode()).isEqualTo(200);

    assertThat(get(MetricsApi.SD_PATH + "?namespace=team", team).statusCode()).isEqualTo(200);
    assertThat(get(MetricsApi.SD_PATH + "?namespace=public", team).statusCode()).isEqualTo(403);
    assertThat(get(MetricsApi.SD_PATH + "?namespace=public", prometheus).statusCode()).isEqualTo(200);
  }

  @Test
  void everyLimitCountedFromZeroIsAServerOption() {
    assertThat(io.roster.server.config.ServerConfig.optionNames()).containsAll(RequestCounters.LIMITS);
  }

  @Test
  void labelNamesKeepOnlyWhatPrometheusAllows() {
    assertThat(MetricsApi.labelName("app.version")).isEqualTo("app_version");
    assertThat(MetricsApi.labelName("zone-1/é")).isEqualTo("zone_1__");
    assertThat(MetricsApi.labelName("ok_Name9")).isEqualTo("ok_Name9");
  }

  // --- helpers ---

  private static List<String> targets(JsonNode groups) {
    List<String> out = new ArrayList<>();
    groups.forEach(g -> g.get("targets").forEach(t -> out.add(t.asText())));
    return out;
  }

  private MetricSnapshot metric(String name) {
    for (MetricSnapshot s : loopback.server().metrics().prometheus().scrape()) {
      if (s.getMetadata().getPrometheusName().equals(name)) {
        return s;
      }
    }
    throw new AssertionError("no metric " + name);
  }

  /** The value of the data point of {@code name} with these label values (name, value, name, value...). */
  private double value(String name, String... labels) {
    Labels wanted = Labels.of(labels);
    for (DataPointSnapshot p : metric(name).getDataPoints()) {
      if (p.getLabels().equals(wanted)) {
        if (p instanceof CounterSnapshot.CounterDataPointSnapshot c) {
          return c.getValue();
        }
        if (p instanceof GaugeSnapshot.GaugeDataPointSnapshot g) {
          return g.getValue();
        }
      }
    }
    return 0; // a label set never counted reads as zero, as Prometheus's absent series would
  }

  private long histogramCount(String name) {
    return ((HistogramSnapshot) metric(name)).getDataPoints().get(0).getCount();
  }

  /** How many label sets all of the server's own metrics have together. */
  private int labelSets() {
    int n = 0;
    for (MetricSnapshot s : loopback.server().metrics().prometheus().scrape()) {
      n += s.getDataPoints().size();
    }
    return n;
  }

  private URI uri(String pathAndQuery) {
    return URI.create("http://127.0.0.1:" + loopback.server().httpPort() + pathAndQuery);
  }

  private HttpResponse<String> get(String pathAndQuery) throws Exception {
    return get(pathAndQuery, null);
  }

  private HttpResponse<String> get(String pathAndQuery, String token) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri(pathAndQuery)).timeout(TestTime.seconds(10));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return http.send(b.build(), BodyHandlers.ofString());
  }

  private HttpResponse<String> post(String pathAndQuery) throws Exception {
    return http.send(HttpRequest.newBuilder(uri(pathAndQuery)).timeout(TestTime.seconds(10))
        .POST(BodyPublishers.noBody()).build(), BodyHandlers.ofString());
  }
}
