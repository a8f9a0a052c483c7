package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.naming.NamingFactory;
import com.alibaba.nacos.api.naming.NamingService;
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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A Spring Boot 3.2 application on spring-cloud-starter-alibaba-nacos-discovery 2023.0.3.2
 * (nacos-client 2.4.2; module spring-cloud-nacos-app) in a child process against a Roster server:
 * it registers itself on start, finds another application through Spring's {@code
 * DiscoveryClient}, and deregisters on shutdown (SIGTERM).
 */
class SpringCloudNacosTest {

  private static final Path APP = Path.of(System.getProperty("roster.spring.cloud.app.dir",
      "../spring-cloud-nacos-app/target"));
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private static ServerProcess server;
  private static NamingService observer;
  private static Path cache;

  @BeforeAll
  static void startServer() throws Exception {
    cache = Files.createTempDirectory("spring-cloud-nacos-cache");
    System.setProperty("JM.SNAPSHOT.PATH", cache.toString());
    System.setProperty("JM.LOG.PATH", cache.resolve("logs").toString());
    int port = Ports.freeForNacos();
    // The HTTP port where the Nacos client looks for it (serverAddr = gRPC port - 1000): the
    // actuator's status change goes there.
    server = ServerProcess.start("127.0.0.1", port, "--http-port", "auto");
    Properties p = new Properties();
    p.setProperty(PropertyKeyConst.SERVER_ADDR, nacosAddress());
    observer = NamingFactory.createNamingService(p);
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (observer != null) {
      observer.shutDown();
    }
    if (server != null) {
      server.close();
    }
  }

  private static String nacosAddress() {
    return "127.0.0.1:" + (server.port - 1000);
  }

  private static List<String> registered(String service) throws Exception {
    return observer.getAllInstances(service, false).stream().map(i -> i.getIp() + ":" + i.getPort()).sorted().toList();
  }

  private static String get(int port, String path) throws IOException, InterruptedException {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    return r.body();
  }

  /**
   * The application registers on start; its DiscoveryClient finds a second application (a
   * nacos-client provider registered by this test, one Spring Boot JVM being enough to load the
   * machine); SIGTERM deregisters it.
   */
  @Test
  void applicationRegistersFindsAnotherAndDeregistersOnShutdown() throws Exception {
    int port = Ports.free();
    Properties p = new Properties();
    p.setProperty(PropertyKeyConst.SERVER_ADDR, nacosAddress());
    NamingService other = NamingFactory.createNamingService(p);
    try (App app = new App("sc-app-a", port)) {
      other.registerInstance("sc-app-b", "10.0.12.1", 8080);
      await().atMost(Timing.seconds(90)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
        app.assertAlive();
        assertThat(registered("sc-app-a")).containsExactly("127.0.0.1:" + port);
      });
      // DiscoveryClient: getInstances is Nacos's selectInstances, getServices its getServicesOfServer.
      await().atMost(Timing.seconds(15)).ignoreExceptions().untilAsserted(() -> {
        assertThat(get(port, "/instances/sc-app-b")).isEqualTo("[\"10.0.12.1:8080\"]");
        assertThat(get(port, "/services")).contains("\"sc-app-a\"", "\"sc-app-b\"");
      });
      // The second application goes: pushed to the first one's discovery client.
      other.shutDown();
      await().atMost(Timing.seconds(15)).ignoreExceptions().untilAsserted(() ->
          assertThat(get(port, "/instances/sc-app-b")).isEqualTo("[]"));

      app.process.destroy(); // SIGTERM: Spring closes the context, which deregisters
      assertThat(app.process.waitFor(Timing.seconds(30).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
          .isTrue();
      assertThat(app.output()).contains("De-registration finished");
      assertThat(registered("sc-app-a")).isEmpty();
    } finally {
      other.shutDown();
    }
  }

  /**
   * {@code POST /actuator/serviceregistry {"status":"DOWN"}} takes an instance out of traffic:
   * Spring Cloud Alibaba does it with Nacos's HTTP API ({@code PUT /nacos/v1/ns/instance}
   * enabled=false), served on the HTTP port.
   */
  @Test
  void actuatorServiceRegistryDownTakesTheInstanceOutOfTraffic() throws Exception {
    int port = Ports.free();
    try (App app = new App("sc-app-c", port)) {
      await().atMost(Timing.seconds(90)).untilAsserted(() ->
          assertThat(registered("sc-app-c")).containsExactly("127.0.0.1:" + port));
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + port + "/actuator/serviceregistry"))
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"status\":\"DOWN\"}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isLessThan(300);
      await().atMost(Timing.seconds(15)).untilAsserted(() -> {
        assertThat(get(port, "/instances/sc-app-c")).isEqualTo("[]");
        // Nacos filters disabled instances from queries and pushes too (enableOnly=true).
        assertThat(observer.getAllInstances("sc-app-c", false)).isEmpty();
      });
    }
  }

  /**
   * {@code spring.cloud.nacos.discovery.ephemeral=false}: the application registers itself as a
   * persistent instance (docs/persistence.md), and deregisters it on shutdown.
   */
  @Test
  void aPersistentApplicationRegistersAndDeregistersOnShutdown() throws Exception {
    int port = Ports.free();
    try (App app = new App("sc-app-p", port, "--spring.cloud.nacos.discovery.ephemeral=false")) {
      await().atMost(Timing.seconds(90)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
        app.assertAlive();
        assertThat(observer.getAllInstances("sc-app-p", false)).singleElement().satisfies(i -> {
          assertThat(i.getIp() + ":" + i.getPort()).isEqualTo("127.0.0.1:" + port);
          assertThat(i.isEphemeral()).isFalse();
        });
      });
      app.process.destroy(); // SIGTERM: Spring closes the context, which deregisters
      assertThat(app.process.waitFor(Timing.seconds(30).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
          .isTrue();
      assertThat(registered("sc-app-p")).isEmpty();
    }
  }

  /** {@code DiscoveryApp} of module spring-cloud-nacos-app in a child JVM, on that module's classpath. */
  private static final class App extends JavaProcess {
    App(String name, int port, String... more) throws IOException {
      super(name, arguments(name, port, more));
    }

    private static List<String> arguments(String name, int port, String... more) throws IOException {
      List<String> args = new java.util.ArrayList<>(List.of("-Xmx128m", "-DJM.SNAPSHOT.PATH=" + cache,
          "-DJM.LOG.PATH=" + cache.resolve("logs"), "-cp", classpath(), "io.roster.it.springcloud.DiscoveryApp",
          "--spring.application.name=" + name, "--server.port=" + port,
          "--spring.cloud.nacos.discovery.server-addr=" + nacosAddress(),
          "--spring.cloud.nacos.discovery.ip=127.0.0.1",
          "--management.endpoints.web.exposure.include=serviceregistry",
          "--spring.main.banner-mode=off"));
      args.addAll(List.of(more));
      return args;
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
