package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.roster.client.Instance;
import io.roster.client.RosterClient;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real Prometheus (Debian's {@code prometheus} binary, started here on loopback) scrapes a real
 * Roster server process and discovers its targets through Roster's HTTP service discovery
 * (docs/observability.md). While a workload runs, Prometheus's own query API shows the counters
 * move as the workload predicts, and the discovered targets follow registrations and
 * deregistrations; the alert rules shipped in docker/prometheus load and evaluate, and every
 * Roster metric the rules and the dashboard name is in the scrape (the cluster's and TLS's
 * excepted: this server is standalone, without TLS). Prometheus parses the exposition itself: a
 * scrape it cannot parse is {@code up == 0}. The server runs with the compose cluster's sample
 * auth file (docker/auth.json), and Prometheus sends the shipped token
 * (docker/prometheus/roster.token) as the shipped config's {@code authorization} sections say, for
 * the scrape and for the discovery.
 *
 * <p>Skipped, saying why, where the binary is absent, except in CI (.ci/run installs it).
 */
class PrometheusScrapeTest {

  private static final Path DOCKER = ShippedDockerFiles.DOCKER;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int PROVIDERS = 12;

  @TempDir Path dir;

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Timing.seconds(10)).build();
  private final List<AutoCloseable> closing = new ArrayList<>();
  private int prometheusPort;
  private String accessToken = "";

  @AfterEach
  void stop() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
  }

  @Test
  void prometheusScrapesRosterAndDiscoversItsInstances() throws Exception {
    Path binary = prometheusBinary();
    int httpPort = Ports.free();
    // A data directory, so that its metrics (and the disk-space rule's) are in the scrape too.
    ServerProcess server = ServerProcess.start("127.0.0.1", Ports.free(), "--http-port", Integer.toString(httpPort),
        "--data-dir", dir.resolve("roster-data").toString(), "--auth-file", ShippedDockerFiles.AUTH_FILE.toString());
    closing.add(server);
    accessToken = ShippedDockerFiles.adminAccessToken("127.0.0.1", httpPort);
    startPrometheus(binary, httpPort);

    await().atMost(Timing.seconds(60)).until(() -> value("up{job=\"roster\"}").orElse(0.0) == 1.0);
    // With the shipped token: neither the scrapes nor the discovery were refused.
    assertThat(value("roster_auth_failures_total")).hasValue(0.0);
    double registered = value("roster_registrations_total{kind=\"session\"}").orElseThrow();
    double acks = value("roster_push_acks_total").orElseThrow();

    RosterClient provider = client(server, "exporters");
    RosterClient consumer = client(server, "dashboards");
    Subscriber watching = new Subscriber(consumer, "exporters");
    // Closed ports on loopback: Prometheus finds them and fails to scrape them at once. Distinct:
    // the system may hand out a port it just freed again, and the same address is one instance.
    Set<Integer> distinct = new LinkedHashSet<>();
    while (distinct.size() < PROVIDERS) {
      distinct.add(Ports.free());
    }
    List<Integer> ports = List.copyOf(distinct);
    for (int port : ports) {
      provider.registerInstance("exporters", Instance.of("127.0.0.1", port));
    }
    watching.await(Timing.seconds(10), list -> list.size() == PROVIDERS);

    await().atMost(Timing.seconds(30)).untilAsserted(() -> {
      assertThat(value("roster_registrations_total{kind=\"session\"}")).hasValue(registered + PROVIDERS);
      assertThat(value("roster_sessions{protocol=\"roster\"}")).hasValue(2.0);
      assertThat(value("roster_subscriptions{protocol=\"roster\"}")).hasValue(1.0);
      assertThat(value("sum(roster_instances)")).hasValue((double) PROVIDERS);
      assertThat(value("roster_push_acks_total").orElseThrow()).isGreaterThan(acks);
      assertThat(value("roster_change_to_ack_seconds_count").orElseThrow()).isPositive();
      assertThat(discovered()).hasSize(PROVIDERS);
    });
    assertThat(value("roster_requests_total{protocol=\"roster\",type=\"register\",result=\"ok\"}"))
        .hasValue((double) PROVIDERS);

    for (int i = 0; i < 4; i++) {
      provider.deregisterInstance("exporters", Instance.of("127.0.0.1", ports.get(i)));
    }
    await().atMost(Timing.seconds(30)).untilAsserted(() -> {
      assertThat(value("roster_deregistrations_total{kind=\"session\",reason=\"request\"}")).hasValue(4.0);
      assertThat(discovered()).hasSize(PROVIDERS - 4)
          .allSatisfy(t -> assertThat(t.get("labels").get("service").asText()).isEqualTo("exporters"));
    });

    provider.close();
    await().atMost(Timing.seconds(30)).untilAsserted(() -> {
      assertThat(value("sum(roster_deregistrations_total{kind=\"session\"})")).hasValue((double) PROVIDERS);
      assertThat(discovered()).isEmpty();
    });

    // The shipped rules loaded and evaluate against this server's series without error.
    JsonNode groups = get("/api/v1/rules").get("data").get("groups");
    assertThat(groups).isNotEmpty();
    for (JsonNode group : groups) {
      for (JsonNode rule : group.get("rules")) {
        assertThat(rule.get("health").asText()).as(rule.get("name").asText() + ": " + rule.path("lastError").asText())
            .isEqualTo("ok");
      }
    }
    // Every Roster metric the rules and the dashboard name is one this server exports.
    Set<String> missing = new TreeSet<>();
    for (String name : namedMetrics()) {
      if (!name.startsWith("roster_cluster_") && !name.startsWith("roster_tls_")
          && value("count({__name__=~\"" + name + "(_bucket|_count|_sum)?\"})").isEmpty()) {
        missing.add(name);
      }
    }
    assertThat(missing).as("metrics named in docker/prometheus/rules.yml or docker/grafana/roster.json").isEmpty();

    // The exposition as Prometheus's own parser and linter read it (promtool comes with the binary).
    Path exposition = dir.resolve("metrics.txt");
    Files.writeString(exposition, http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort
        + "/metrics")).header("Authorization", "Bearer " + ShippedDockerFiles.token(scrapeToken())).build(),
        BodyHandlers.ofString()).body());
    Path promtool = binary.resolveSibling("promtool");
    if (Files.isExecutable(promtool)) {
      Process check = new ProcessBuilder(promtool.toString(), "check", "metrics").redirectInput(exposition.toFile())
          .redirectErrorStream(true).start();
      String out = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(check.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(check.exitValue()).as("promtool check metrics: " + out).isZero();
      assertThat(out).as("promtool's lint findings").isBlank();
    }
  }

  // --- Prometheus ---

  private static Path prometheusBinary() {
    return ExternalTools.require("prometheus", "ROSTER_PROMETHEUS", "prometheus", "the real-Prometheus test is skipped");
  }

  /** The token file of the shipped config's roster job. */
  private static Path scrapeToken() throws Exception {
    return ShippedDockerFiles.bearerTokenFile(ShippedDockerFiles.job(
        ShippedDockerFiles.yaml(ShippedDockerFiles.PROMETHEUS_CONFIG), "roster"));
  }

  /** The token file of the shipped config's example discovery job. */
  private static Path discoveryToken() throws Exception {
    return ShippedDockerFiles.bearerTokenFile(ShippedDockerFiles.list(ShippedDockerFiles.job(ShippedDockerFiles.yaml(
        ShippedDockerFiles.prometheusConfigWithServiceDiscovery()), "roster-sd"), "http_sd_configs").get(0));
  }

  /** The shipped config's authorization section, its token file named by absolute path. */
  private static String authorization(Path tokenFile) {
    return "authorization: {type: Bearer, credentials_file: '" + tokenFile + "'}";
  }

  private void startPrometheus(Path binary, int rosterHttpPort) throws Exception {
    prometheusPort = Ports.free();
    String roster = "127.0.0.1:" + rosterHttpPort;
    Path config = dir.resolve("prometheus.yml");
    Files.writeString(config, String.join("\n",
        "global:",
        "  scrape_interval: 1s",
        "  evaluation_interval: 1s",
        "rule_files: ['" + DOCKER.resolve("prometheus/rules.yml") + "']",
        "scrape_configs:",
        "  - job_name: roster",
        "    static_configs: [{targets: ['" + roster + "']}]",
        "    " + authorization(scrapeToken()),
        "  - job_name: discovered",
        "    scrape_timeout: 500ms",
        "    http_sd_configs:",
        "      - url: 'http://" + roster + "/roster/v1/prometheus/sd?namespace=public'",
        "        refresh_interval: 1s",
        "        " + authorization(discoveryToken()),
        "    relabel_configs:",
        "      - {source_labels: [__meta_roster_enabled], regex: 'false', action: drop}",
        "      - {source_labels: [__meta_roster_service], target_label: service}",
        ""));
    Process p = new ProcessBuilder(binary.toString(), "--config.file=" + config,
        "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + prometheusPort)
        .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
    closing.add(() -> {
      p.destroy();
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    });
    await().atMost(Timing.seconds(30)).ignoreExceptions().until(() -> {
      assertThat(p.isAlive()).as("prometheus exited: " + Files.readString(dir.resolve("prometheus.log"))).isTrue();
      return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + prometheusPort + "/-/ready")).build(),
          BodyHandlers.discarding()).statusCode() == 200;
    });
  }

  private JsonNode get(String pathAndQuery) throws Exception {
    var r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + prometheusPort + pathAndQuery))
        .timeout(Timing.seconds(10)).build(), BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  /** The single value of an instant query, or empty when it has no series. */
  private Optional<Double> value(String promql) throws Exception {
    JsonNode result = get("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8))
        .get("data").get("result");
    assertThat(result.size()).as(promql + " -> " + result).isLessThanOrEqualTo(1);
    return result.isEmpty() ? Optional.empty() : Optional.of(result.get(0).get("value").get(1).asDouble());
  }

  /** The active targets of the discovered job. */
  private List<JsonNode> discovered() throws Exception {
    List<JsonNode> out = new ArrayList<>();
    for (JsonNode t : get("/api/v1/targets?state=active").get("data").get("activeTargets")) {
      if (t.get("scrapePool").asText().equals("discovered")) {
        out.add(t);
      }
    }
    return out;
  }

  /** Every {@code roster_...} metric name in the shipped rules and dashboard, without histogram suffixes. */
  private static Set<String> namedMetrics() throws Exception {
    String text = Files.readString(DOCKER.resolve("prometheus/rules.yml")) + Files.readString(
        DOCKER.resolve("grafana/roster.json"));
    Set<String> names = new TreeSet<>();
    Matcher m = Pattern.compile("roster_[a-z0-9_]+").matcher(text);
    while (m.find()) {
      names.add(m.group().replaceFirst("_(bucket|count|sum)$", ""));
    }
    return names;
  }

  private RosterClient client(ServerProcess server, String name) {
    RosterClient c = RosterClient.builder().serverAddresses(server.address()).clientName(name)
        .token(accessToken).drainTimeout(Duration.ZERO).requestTimeout(Timing.seconds(15)).build();
    closing.add(c);
    return c;
  }
}
