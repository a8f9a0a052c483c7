package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.Yaml;

/**
 * The files of docker/ as the tests read them: the compose file and Prometheus's config as YAML,
 * the sample auth file the compose cluster runs with, and the sample credentials that go with it
 * (the token Prometheus sends, and the admin user's password, which the compose file's comment and
 * docs/operations.md give). Stateless.
 */
final class ShippedDockerFiles {

  static final Path DOCKER =
      Path.of(System.getProperty("roster.compose.file", "../docker/docker-compose.yml")).toAbsolutePath().normalize()
          .getParent();
  static final Path COMPOSE_FILE = DOCKER.resolve("docker-compose.yml");
  static final Path PROMETHEUS_CONFIG = DOCKER.resolve("prometheus/prometheus.yml");
  /** The sample auth file the compose cluster mounts. */
  static final Path AUTH_FILE = DOCKER.resolve("auth.json");
  /** The sample admin user of {@link #AUTH_FILE}, and its sample password. */
  static final String ADMIN = "admin";
  static final String ADMIN_PASSWORD = "SAMPLE-admin-password-replace-me";

  private ShippedDockerFiles() {}

  /** A YAML file as maps, lists and scalars. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> yaml(String text) {
    Object root = new Yaml().load(text);
    assertThat(root).as("a YAML mapping").isInstanceOf(Map.class);
    return (Map<String, Object>) root;
  }

  static Map<String, Object> yaml(Path file) throws IOException {
    return yaml(Files.readString(file, StandardCharsets.UTF_8));
  }

  /** {@code node.get(key)} as a map (asserted). */
  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object node, String key) {
    assertThat(node).as("a mapping holding %s", key).isInstanceOf(Map.class);
    Object value = ((Map<String, Object>) node).get(key);
    assertThat(value).as("%s: a mapping", key).isInstanceOf(Map.class);
    return (Map<String, Object>) value;
  }

  /** {@code node.get(key)} as a list (asserted). */
  @SuppressWarnings("unchecked")
  static List<Object> list(Object node, String key) {
    assertThat(node).as("a mapping holding %s", key).isInstanceOf(Map.class);
    Object value = ((Map<String, Object>) node).get(key);
    assertThat(value).as("%s: a list", key).isInstanceOf(List.class);
    return (List<Object>) value;
  }

  /** The shipped prometheus.yml's text with its example {@code roster-sd} job turned on, as its comment says. */
  static String prometheusConfigWithServiceDiscovery() throws IOException {
    List<String> on = new ArrayList<>();
    boolean inside = false;
    for (String line : Files.readAllLines(PROMETHEUS_CONFIG, StandardCharsets.UTF_8)) {
      if (line.strip().startsWith("# BEGIN roster-sd")) {
        inside = true;
      } else if (line.strip().startsWith("# END roster-sd")) {
        inside = false;
      } else {
        on.add(inside ? line.replaceFirst("^(\\s*)# ?", "$1") : line);
      }
    }
    return String.join("\n", on) + "\n";
  }

  /** The scrape job named {@code name} of a Prometheus config. */
  static Map<String, Object> job(Map<String, Object> config, String name) {
    for (Object job : list(config, "scrape_configs")) {
      if (job instanceof Map<?, ?> m && name.equals(m.get("job_name"))) {
        @SuppressWarnings("unchecked")
        Map<String, Object> found = (Map<String, Object>) m;
        return found;
      }
    }
    throw new AssertionError("no scrape job " + name + " in " + config);
  }

  /**
   * An {@code authorization} section of the shipped config: a bearer token read from a file. Returns
   * that file, resolved as Prometheus resolves it (relative to the config's folder).
   */
  static Path bearerTokenFile(Object holder) {
    Map<String, Object> auth = map(holder, "authorization");
    assertThat(auth).as("authorization").containsOnlyKeys("type", "credentials_file").containsEntry("type", "Bearer");
    Path file = PROMETHEUS_CONFIG.getParent().resolve(String.valueOf(auth.get("credentials_file"))).normalize();
    assertThat(file).as("credentials_file").isRegularFile();
    return file;
  }

  /** The token in {@code file}, as Prometheus reads it (surrounding white space trimmed). */
  static String token(Path file) throws IOException {
    return Files.readString(file, StandardCharsets.UTF_8).strip();
  }

  /** An access token for the sample admin user, from a login at {@code httpPort} on loopback. */
  static String adminAccessToken(String host, int httpPort) throws IOException, InterruptedException {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://" + host + ":"
            + httpPort + "/nacos/v1/auth/users/login?username=" + ADMIN))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .POST(HttpRequest.BodyPublishers.ofString("password=" + URLEncoder.encode(ADMIN_PASSWORD,
            StandardCharsets.UTF_8)))
        .timeout(Timing.seconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as("the sample admin's login: %s", r.body()).isEqualTo(200);
    String token = new ObjectMapper().readTree(r.body()).path("accessToken").asText();
    assertThat(token).as("the accessToken in %s", r.body()).isNotBlank();
    return token;
  }
}
