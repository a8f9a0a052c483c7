package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.naming.NamingFactory;
import com.alibaba.nacos.api.naming.NamingService;
import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.process.JavaProcess;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The Spring Cloud Alibaba application (module spring-cloud-nacos-app) against a Roster server
 * with auth on, given {@code spring.cloud.nacos.discovery.username} and {@code password}: it
 * registers itself, finds another application and is pushed its departure, takes itself out of
 * traffic with {@code /actuator/serviceregistry} (its user is an admin of its own service only),
 * and deregisters on shutdown. The application's code and settings are those of any Spring Cloud
 * application on Nacos with auth.
 */
class SpringCloudNacosAuthTest {

  private static final Path APP = Path.of(System.getProperty("roster.spring.cloud.app.dir",
      "../spring-cloud-nacos-app/target"));
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private static final String PASSWORD = "a password of the app";

  @Test
  void anApplicationWithCredentialsRegistersDiscoversIsPushedGoesDownAndDeregisters() throws Exception {
    Path dir = Files.createTempDirectory("spring-cloud-nacos-auth");
    System.setProperty("JM.SNAPSHOT.PATH", dir.toString());
    System.setProperty("JM.LOG.PATH", dir.resolve("logs").toString());
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json"))
        .user("app", PASSWORD, "write@public", "admin@public/sc-auth-a")
        .user("ops", PASSWORD, "admin@*");
    int grpc;
    do {
      grpc = Ports.free();
    } while (grpc <= 1000);
    int port = Ports.free();
    try (ServerProcess server = ServerProcess.start("127.0.0.1", grpc, "--http-port", "auto", "--auth-file",
        auth.path().toString())) {
      String nacos = "127.0.0.1:" + (server.port - 1000);
      NamingService observer = naming(nacos, "ops");
      NamingService other = naming(nacos, "app");
      try (App app = new App(dir, nacos, "sc-auth-a", port)) {
        other.registerInstance("sc-auth-b", "10.0.14.1", 8080);
        await().atMost(Timing.seconds(90)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
          app.assertAlive();
          assertThat(registered(observer, "sc-auth-a")).containsExactly("127.0.0.1:" + port);
        });
        await().atMost(Timing.seconds(15)).ignoreExceptions().untilAsserted(() -> {
          assertThat(get(port, "/instances/sc-auth-b")).isEqualTo("[\"10.0.14.1:8080\"]");
          assertThat(get(port, "/services")).contains("\"sc-auth-a\"", "\"sc-auth-b\"");
        });
        other.shutDown();
        await().atMost(Timing.seconds(15)).ignoreExceptions().untilAsserted(() ->
            assertThat(get(port, "/instances/sc-auth-b")).isEqualTo("[]"));

        HttpResponse<String> down = HTTP.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/actuator/serviceregistry"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"status\":\"DOWN\"}")).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(down.statusCode()).isLessThan(300);
        await().atMost(Timing.seconds(15)).untilAsserted(() ->
            assertThat(registered(observer, "sc-auth-a")).isEmpty());

        app.process.destroy(); // SIGTERM: Spring closes the context, which deregisters
        assertThat(app.process.waitFor(Timing.seconds(30).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
            .isTrue();
        assertThat(app.output()).contains("De-registration finished");
      } finally {
        other.shutDown();
        observer.shutDown();
      }
    }
  }

  private static NamingService naming(String serverAddr, String user) throws Exception {
    Properties p = new Properties();
    p.setProperty(PropertyKeyConst.SERVER_ADDR, serverAddr);
    p.setProperty(PropertyKeyConst.USERNAME, user);
    p.setProperty(PropertyKeyConst.PASSWORD, PASSWORD);
    return NamingFactory.createNamingService(p);
  }

  /** Enabled instances, as consumers see them. */
  private static List<String> registered(NamingService observer, String service) throws Exception {
    return observer.getAllInstances(service, false).stream().map(i -> i.getIp() + ":" + i.getPort()).sorted()
        .toList();
  }

  private static String get(int port, String path) throws IOException, InterruptedException {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
  }

  /** {@code DiscoveryApp} of module spring-cloud-nacos-app in a child JVM, with the Nacos user's credentials. */
  private static final class App extends JavaProcess {
    App(Path dir, String nacos, String name, int port) throws IOException {
      super(name, List.of("-Xmx128m", "-DJM.SNAPSHOT.PATH=" + dir, "-DJM.LOG.PATH=" + dir.resolve("logs"),
          "-cp", classpath(), "io.roster.it.springcloud.DiscoveryApp",
          "--spring.application.name=" + name, "--server.port=" + port,
          "--spring.cloud.nacos.discovery.server-addr=" + nacos,
          "--spring.cloud.nacos.discovery.username=app",
          "--spring.cloud.nacos.discovery.password=" + PASSWORD,
          "--spring.cloud.nacos.discovery.ip=127.0.0.1",
          "--management.endpoints.web.exposure.include=serviceregistry",
          "--spring.main.banner-mode=off"));
    }

    private static String classpath() throws IOException {
      Path file = APP.resolve("app-classpath.txt");
      if (!Files.exists(file)) {
        throw new IllegalStateException(file + " is missing: build module spring-cloud-nacos-app first");
      }
      return APP.resolve("classes") + java.io.File.pathSeparator + Files.readString(file).trim();
    }

    void assertAlive() {
      if (!isAlive()) {
        throw new IllegalStateException("application exited:\n" + output());
      }
    }
  }
}
