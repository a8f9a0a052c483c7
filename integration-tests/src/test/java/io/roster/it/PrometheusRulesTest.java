package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The monitoring files next to the compose file, checked with Prometheus's own {@code promtool}:
 * docker/prometheus/rules.yml parses and its unit tests (rules_test.yml) pass, prometheus.yml is
 * a valid config as shipped and with its example {@code roster-sd} job turned on, both sending the
 * bearer token of roster.token (which promtool checks is there); and the Grafana
 * dashboard docker/grafana/roster.json has panels whose every query is valid PromQL (promtool
 * checks them as recording rules), filters on {@code $instance}, and names only Roster's metrics.
 * The promtool checks are skipped, saying why, where promtool is not installed (Debian's {@code
 * prometheus} package has it), except in CI (CI=true), where .ci/run installs it and its absence
 * is a failure.
 */
class PrometheusRulesTest {

  private static final Path DOCKER =
      Path.of(System.getProperty("roster.compose.file", "../docker/docker-compose.yml")).toAbsolutePath().normalize()
          .getParent();
  private static final Path PROMETHEUS = DOCKER.resolve("prometheus");
  private static final Path DASHBOARD = DOCKER.resolve("grafana/roster.json");

  /** The metric contract's names: Roster's own, the Java client's JVM and process metrics, and Prometheus's up. */
  private static final List<String> METRIC_PREFIXES = List.of("roster_", "jvm_", "process_");
  private static final Set<String> METRIC_NAMES = Set.of("up");

  @TempDir Path dir;

  private Path promtool;

  /** promtool, or the test is skipped (a failure in CI). */
  private void requirePromtool() {
    promtool = ExternalTools.require("promtool", "ROSTER_PROMTOOL", "prometheus",
        "Prometheus rule and config checks skipped");
  }

  @Test
  void theAlertRulesParse() throws Exception {
    requirePromtool();
    String out = promtool("check", "rules", PROMETHEUS.resolve("rules.yml").toString());
    assertThat(out).contains("SUCCESS");
  }

  @Test
  void theAlertRulesPassTheirUnitTests() throws Exception {
    requirePromtool();
    String out = promtool("test", "rules", PROMETHEUS.resolve("rules_test.yml").toString());
    assertThat(out).contains("SUCCESS");
  }

  @Test
  void theScrapeConfigIsValid() throws Exception {
    requirePromtool();
    String out = promtool("check", "config", PROMETHEUS.resolve("prometheus.yml").toString());
    assertThat(out).contains("is valid prometheus config file");
    Path token = ShippedDockerFiles.bearerTokenFile(ShippedDockerFiles.job(
        ShippedDockerFiles.yaml(PROMETHEUS.resolve("prometheus.yml")), "roster"));
    assertThat(token).isEqualTo(PROMETHEUS.resolve("roster.token"));
  }

  /** The commented-out example job, with its lines' leading "# " taken off, as its comment says. */
  @Test
  void theScrapeConfigIsValidWithTheServiceDiscoveryExampleOn() throws Exception {
    requirePromtool();
    List<String> lines = Files.readAllLines(PROMETHEUS.resolve("prometheus.yml"), StandardCharsets.UTF_8);
    List<String> on = new ArrayList<>();
    boolean inside = false;
    int uncommented = 0;
    for (String line : lines) {
      if (line.strip().startsWith("# BEGIN roster-sd")) {
        inside = true;
      } else if (line.strip().startsWith("# END roster-sd")) {
        inside = false;
      } else if (inside) {
        on.add(line.replaceFirst("^(\\s*)# ?", "$1"));
        uncommented++;
      } else {
        on.add(line);
      }
    }
    assertThat(uncommented).as("lines between # BEGIN roster-sd and # END roster-sd").isGreaterThan(5);
    Path config = dir.resolve("prometheus.yml");
    Files.write(config, on, StandardCharsets.UTF_8);
    Files.copy(PROMETHEUS.resolve("rules.yml"), dir.resolve("rules.yml"));
    Files.copy(PROMETHEUS.resolve("roster.token"), dir.resolve("roster.token"));

    String out = promtool("check", "config", config.toString());
    assertThat(out).contains("is valid prometheus config file");
    assertThat(String.join("\n", on)).contains("job_name: roster-sd", "http_sd_configs:",
        "http://roster1:8848/roster/v1/prometheus/sd?namespace=public", "__meta_roster_enabled");
    // The discovery request sends the token; the discovered targets' scrapes do not.
    Map<String, Object> sd = ShippedDockerFiles.job(ShippedDockerFiles.yaml(String.join("\n", on)), "roster-sd");
    assertThat(ShippedDockerFiles.bearerTokenFile(ShippedDockerFiles.list(sd, "http_sd_configs").get(0)))
        .isEqualTo(PROMETHEUS.resolve("roster.token"));
    assertThat(sd).doesNotContainKey("authorization");
  }

  @Test
  void theDashboardQueriesNameOnlyRosterMetrics() throws Exception {
    ObjectMapper json = new ObjectMapper();
    JsonNode dashboard = json.readTree(DASHBOARD.toFile());

    assertThat(dashboard.path("__inputs").findValuesAsText("name")).contains("DS_PROMETHEUS");
    List<String> variables = dashboard.path("templating").path("list").findValuesAsText("name");
    assertThat(variables).contains("datasource", "instance");

    List<String> exprs = new ArrayList<>();
    List<JsonNode> panels = panels(dashboard);
    assertThat(panels).as("panels").isNotEmpty();
    for (JsonNode panel : panels) {
      if ("row".equals(panel.path("type").asText())) {
        continue;
      }
      String title = panel.path("title").asText();
      assertThat(panel.path("datasource").path("uid").asText()).as("data source of %s", title).isEqualTo("${datasource}");
      assertThat(panel.path("targets")).as("queries of %s", title).isNotEmpty();
      for (JsonNode target : panel.path("targets")) {
        String expr = target.path("expr").asText();
        assertThat(expr).as("a query of %s", title).isNotBlank().contains("instance=~\"$instance\"");
        for (String name : metricNames(expr)) {
          assertThat(METRIC_NAMES.contains(name) || METRIC_PREFIXES.stream().anyMatch(name::startsWith))
              .as("metric %s in %s: %s (only %s and %s)", name, title, expr, METRIC_PREFIXES, METRIC_NAMES).isTrue();
        }
        if (metricNames(expr).contains("up")) {
          assertThat(expr).as("a query of %s counts Roster's targets only", title).contains("up{job=\"roster\"");
        }
        Matcher counted = COUNTER_FUNCTION.matcher(expr);
        while (counted.find()) {
          assertThat(counted.group(2)).as("%s() in %s takes a counter (a gauge wants deriv() or delta()): %s",
              counted.group(1), title, expr).matches(".*_(total|count|sum|bucket)");
        }
        exprs.add(expr);
      }
    }
    assertThat(exprs.stream().flatMap(e -> metricNames(e).stream()))
        .contains("roster_sessions", "roster_push_resends_total", "roster_cluster_member_lag_entries",
            "jvm_memory_used_bytes", "process_resident_memory_bytes");
  }

  /** Every alert of rules.yml has a case in rules_test.yml that expects it to fire (and, beside it, a quiet series). */
  @Test
  void everyAlertRuleHasAUnitTestThatFiresIt() throws Exception {
    Set<String> alerts = new TreeSet<>();
    Matcher rule = Pattern.compile("- alert: (\\w+)").matcher(Files.readString(PROMETHEUS.resolve("rules.yml")));
    while (rule.find()) {
      alerts.add(rule.group(1));
    }
    Set<String> fired = new TreeSet<>();
    Matcher test = Pattern.compile("alertname: (\\w+)\\s+exp_alerts:")
        .matcher(Files.readString(PROMETHEUS.resolve("rules_test.yml")));
    while (test.find()) {
      fired.add(test.group(1));
    }
    assertThat(alerts).as("alert rules").hasSizeGreaterThan(10);
    assertThat(fired).as("alerts a unit test expects to fire").containsAll(alerts);
  }

  /** Every query as a recording rule, Grafana's variables set as it would set them: promtool parses them. */
  @Test
  void theDashboardQueriesAreValidPromQl() throws Exception {
    requirePromtool();
    ObjectMapper json = new ObjectMapper();
    List<String> exprs = new ArrayList<>();
    for (JsonNode panel : panels(json.readTree(DASHBOARD.toFile()))) {
      panel.path("targets").forEach(t -> exprs.add(t.path("expr").asText()));
    }
    assertThat(exprs).isNotEmpty();
    ObjectNode rules = json.createObjectNode();
    ArrayNode list = rules.putArray("groups").addObject().put("name", "dashboard").putArray("rules");
    for (int i = 0; i < exprs.size(); i++) {
      list.addObject().put("record", "dashboard:query_" + i)
          .put("expr", exprs.get(i).replace("$__rate_interval", "1m").replace("$instance", ".*"));
    }
    Path file = dir.resolve("dashboard-queries.yml"); // JSON is YAML
    json.writeValue(file.toFile(), rules);
    String out = promtool("check", "rules", file.toString());
    assertThat(out).contains("SUCCESS: " + exprs.size() + " rules found");
  }

  @Test
  void metricNamesAreFoundInAQuery() {
    assertThat(metricNames("histogram_quantile(0.99, sum by (le, instance) (rate(roster_change_to_ack_seconds_bucket"
        + "{instance=~\"$instance\",le!=\"1\"}[$__rate_interval]))) > bool 1")).containsExactly(
            "roster_change_to_ack_seconds_bucket");
    assertThat(metricNames("sum(up{instance=~\"a\"}) / on (instance) group_left (version) max(roster_build_info)"))
        .containsExactly("roster_build_info", "up");
    assertThat(metricNames("sum(rate(roster_drains_started_total[5m])) * 60 + nacos_monitor{x=\"y\"}"))
        .containsExactly("nacos_monitor", "roster_drains_started_total");
  }

  // --- helpers ---

  /** Every panel, those inside (collapsed) rows too. */
  private static List<JsonNode> panels(JsonNode dashboard) {
    List<JsonNode> all = new ArrayList<>();
    for (JsonNode panel : dashboard.path("panels")) {
      all.add(panel);
      panel.path("panels").forEach(all::add);
    }
    return all;
  }

  /** A function over a counter's range, and the series it takes. */
  private static final Pattern COUNTER_FUNCTION =
      Pattern.compile("\\b(rate|irate|increase)\\(\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)");
  private static final Pattern STRING = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'");
  private static final Pattern MATCHERS = Pattern.compile("\\{[^}]*}");
  private static final Pattern RANGE = Pattern.compile("\\[[^]]*]");
  private static final Pattern LABEL_LIST =
      Pattern.compile("\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)");
  private static final Pattern IDENTIFIER = Pattern.compile("(?<![\\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\\s*\\()?");
  private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset", "by", "without", "on",
      "ignoring", "group_left", "group_right", "inf", "nan");

  /** The metric names in a PromQL expression: its identifiers that are not functions, keywords or labels. */
  static Set<String> metricNames(String expr) {
    String s = STRING.matcher(expr).replaceAll(" ");
    s = MATCHERS.matcher(s).replaceAll(" ");
    s = RANGE.matcher(s).replaceAll(" ");
    s = LABEL_LIST.matcher(s).replaceAll(" ");
    Set<String> names = new TreeSet<>();
    Matcher m = IDENTIFIER.matcher(s);
    while (m.find()) {
      boolean function = m.group(2) != null;
      if (!function && !KEYWORDS.contains(m.group(1).toLowerCase(Locale.ROOT))) {
        names.add(m.group(1));
      }
    }
    return names;
  }

  /** Runs promtool, waits a bounded time, and asserts it exited 0; returns its output (stdout and stderr). */
  private String promtool(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(promtool.toString()));
    command.addAll(List.of(args));
    Path output = Files.createTempFile(dir, "promtool", ".out");
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
    p.getOutputStream().close();
    boolean exited = p.waitFor(Timing.seconds(60).toMillis(), TimeUnit.MILLISECONDS);
    if (!exited) {
      p.destroyForcibly();
    }
    String out = Files.readString(output, StandardCharsets.UTF_8);
    assertThat(exited).as("%s did not finish in time; its output:%n%s", command, out).isTrue();
    assertThat(p.exitValue()).as("exit status of %s; its output:%n%s", command, out).isZero();
    System.out.println(String.join(" ", command) + "\n" + out);
    return out;
  }
}
