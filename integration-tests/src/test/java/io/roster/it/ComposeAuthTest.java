package io.roster.it;

import static io.roster.it.ShippedDockerFiles.list;
import static io.roster.it.ShippedDockerFiles.map;
import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The compose cluster's auth as shipped, without Docker: docker/docker-compose.yml (read as YAML)
 * starts every member with {@code --auth-file} naming the sample docker/auth.json it mounts, and
 * mounts Prometheus's config folder, whose roster.token the config reads; a real server process
 * started with that very auth file serves /metrics and the service discovery to that token and
 * refuses them without it, and lets the sample admin user log in.
 */
class ComposeAuthTest {

  private static final String SERVER_IMAGE = "roster-server:local";

  @Test
  void everyMemberRunsWithTheMountedSampleAuthFile() throws Exception {
    Map<String, Object> services = map(ShippedDockerFiles.yaml(ShippedDockerFiles.COMPOSE_FILE), "services");
    List<String> members = new ArrayList<>();
    for (Map.Entry<String, Object> service : services.entrySet()) {
      if (!SERVER_IMAGE.equals(map(services, service.getKey()).get("image"))) {
        continue; // Prometheus, Grafana
      }
      List<Object> command = list(service.getValue(), "command");
      if (!command.contains("--node-id")) {
        continue; // the pki job
      }
      members.add(service.getKey());
      int at = command.indexOf("--auth-file");
      assertThat(at).as("%s's command %s passes --auth-file", service.getKey(), command).isNotNegative();
      String inContainer = String.valueOf(command.get(at + 1));
      assertThat(list(service.getValue(), "volumes")).as("%s's volumes", service.getKey())
          .contains("./auth.json:" + inContainer + ":ro");
    }
    assertThat(members).containsExactly("roster1", "roster2", "roster3");
    assertThat(ShippedDockerFiles.AUTH_FILE).isRegularFile();

    // Prometheus: the config folder is mounted where --config.file points, so the token file the
    // config names relative to itself is in the container too.
    Map<String, Object> prometheus = map(services, "prometheus");
    String configFile = list(prometheus, "command").stream().map(String::valueOf)
        .filter(a -> a.startsWith("--config.file=")).findFirst().orElseThrow().substring("--config.file=".length());
    String configDir = Path.of(configFile).getParent().toString();
    assertThat(list(prometheus, "volumes")).contains("./prometheus:" + configDir + ":ro");
    Map<String, Object> config = ShippedDockerFiles.yaml(ShippedDockerFiles.PROMETHEUS_CONFIG);
    Path token = ShippedDockerFiles.bearerTokenFile(ShippedDockerFiles.job(config, "roster"));
    assertThat(token.getParent()).isEqualTo(ShippedDockerFiles.PROMETHEUS_CONFIG.getParent());
  }

  @Test
  void theShippedTokenReadsTheMetricsOfAServerRunningWithTheShippedAuthFile() throws Exception {
    int httpPort = Ports.free();
    try (ServerProcess server = ServerProcess.start("127.0.0.1", Ports.free(), "--http-port",
        Integer.toString(httpPort), "--auth-file", ShippedDockerFiles.AUTH_FILE.toString())) {
      Map<String, Object> config = ShippedDockerFiles.yaml(ShippedDockerFiles.PROMETHEUS_CONFIG);
      String token = ShippedDockerFiles.token(ShippedDockerFiles.bearerTokenFile(ShippedDockerFiles.job(config,
          "roster")));
      Object sd = list(ShippedDockerFiles.job(ShippedDockerFiles.yaml(
          ShippedDockerFiles.prometheusConfigWithServiceDiscovery()), "roster-sd"), "http_sd_configs").get(0);
      String sdToken = ShippedDockerFiles.token(ShippedDockerFiles.bearerTokenFile(sd));

      HttpResponse<String> metrics = get(httpPort, "/metrics", token);
      assertThat(metrics.statusCode()).as(metrics.body()).isEqualTo(200);
      assertThat(metrics.body()).contains("roster_build_info");
      HttpResponse<String> discovery = get(httpPort, "/roster/v1/prometheus/sd?namespace=public", sdToken);
      assertThat(discovery.statusCode()).as(discovery.body()).isEqualTo(200);

      HttpResponse<String> without = get(httpPort, "/metrics");
      assertThat(without.statusCode()).as(without.body()).isIn(401, 403);
      assertThat(without.body()).doesNotContain("roster_build_info");
      HttpResponse<String> wrong = get(httpPort, "/metrics", token + "x");
      assertThat(wrong.statusCode()).as(wrong.body()).isIn(401, 403);
      HttpResponse<String> sdWithout = get(httpPort, "/roster/v1/prometheus/sd?namespace=public");
      assertThat(sdWithout.statusCode()).as(sdWithout.body()).isIn(401, 403);

      assertThat(ShippedDockerFiles.adminAccessToken("127.0.0.1", server.httpPort())).isNotBlank();
    }
  }

  private static HttpResponse<String> get(int port, String pathAndQuery, String token) throws Exception {
    return send(request(port, pathAndQuery).header("Authorization", "Bearer " + token));
  }

  /** Without credentials. */
  private static HttpResponse<String> get(int port, String pathAndQuery) throws Exception {
    return send(request(port, pathAndQuery));
  }

  private static HttpRequest.Builder request(int port, String pathAndQuery) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery)).timeout(Timing.seconds(10));
  }

  private static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
    return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
  }
}
