package io.roster.server.probe;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.roster.proto.v1.GetServiceResponse;
import io.roster.proto.v1.HealthCheckType;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceInfo;
import io.roster.proto.v1.UpdateServiceRequest;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import io.grpc.StatusRuntimeException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A standalone server probing real targets on loopback: persistent instances registered and their
 * clusters' checks set through the Nacos v1 HTTP API and the Roster API; a subscriber is pushed
 * each flip.
 */
class ServerProbesTest {

  private static final Duration INTERVAL = Duration.ofSeconds(1);

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.with(b -> b.probeInterval(INTERVAL)
      .probeTimeout(Duration.ofMillis(300)).probeThreshold(2));

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(TestTime.seconds(5)).build();
  private ServerSocket tcpTarget;
  private HttpServer httpTarget;

  @AfterEach
  void stopTargets() throws Exception {
    if (tcpTarget != null) {
      tcpTarget.close();
    }
    if (httpTarget != null) {
      httpTarget.stop(0);
    }
  }

  private record Answer(int status, String body) {}

  private Answer call(String method, String path, String form) throws Exception {
    HttpRequest r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + loopback.server().httpPort() + path))
        .header("Content-Type", "application/x-www-form-urlencoded").timeout(TestTime.seconds(10))
        .method(method, BodyPublishers.ofString(form)).build();
    HttpResponse<String> a = http.send(r, BodyHandlers.ofString());
    return new Answer(a.statusCode(), a.body());
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  private static boolean healthy(ServiceInfo info, int port) {
    return info.getInstancesList().stream().anyMatch(i -> i.getPort() == port && i.getHealthy());
  }

  private static boolean unhealthy(ServiceInfo info, int port) {
    return info.getInstancesList().stream().anyMatch(i -> i.getPort() == port && !i.getHealthy());
  }

  @Test
  void aStoppedTcpTargetIsPushedUnhealthyAndBackHealthyWhenItReturns() throws Exception {
    tcpTarget = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    int port = tcpTarget.getLocalPort();
    TestSession consumer = loopback.open(loopback.newChannel()).hello("consumer");
    assertThat(consumer.subscribe("db").getOk()).isTrue();
    assertThat(call("POST", "/nacos/v1/ns/instance", "serviceName=db&ip=127.0.0.1&port=" + port + "&ephemeral=false"))
        .isEqualTo(new Answer(200, "ok"));
    consumer.awaitPush("db", i -> healthy(i, port));
    long stopped = System.nanoTime();
    tcpTarget.close();
    consumer.awaitPush("db", i -> unhealthy(i, port));
    long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopped);
    // interval × threshold + 1 s is the bound (docs/persistence.md); the test allows the machine twice that.
    assertThat(took).as("ms from stop to push").isLessThan(TestTime.scaled(INTERVAL.multipliedBy(2)
        .plusSeconds(1)).toMillis() * 2);

    tcpTarget = new ServerSocket();
    tcpTarget.setReuseAddress(true);
    tcpTarget.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    consumer.awaitPush("db", i -> healthy(i, port));
  }

  @Test
  void anHttpCheckSetThroughNacosClusterApiFollowsTheStatusAndNeverARedirect() throws Exception {
    AtomicInteger status = new AtomicInteger(200);
    AtomicInteger asked = new AtomicInteger();
    httpTarget = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    httpTarget.createContext("/health", x -> {
      asked.incrementAndGet();
      x.getResponseHeaders().add("Location", "http://127.0.0.1:1/elsewhere");
      x.sendResponseHeaders(status.get(), -1);
      x.close();
    });
    httpTarget.start();
    int port = httpTarget.getAddress().getPort();
    assertThat(call("PUT", "/nacos/v1/ns/cluster", "serviceName=api&clusterName=DEFAULT&healthChecker="
        + enc("{\"type\":\"HTTP\",\"path\":\"/health\",\"headers\":\"X-Probe:roster\"}")))
        .isEqualTo(new Answer(200, "ok"));
    TestSession consumer = loopback.open(loopback.newChannel()).hello("consumer");
    assertThat(consumer.subscribe("api").getOk()).isTrue();
    call("POST", "/nacos/v1/ns/instance", "serviceName=api&ip=127.0.0.1&port=" + port + "&ephemeral=false");
    consumer.awaitPush("api", i -> healthy(i, port));

    status.set(302);
    consumer.awaitPush("api", i -> unhealthy(i, port));
    status.set(200);
    consumer.awaitPush("api", i -> healthy(i, port));
    assertThat(asked.get()).as("two answers each way").isGreaterThanOrEqualTo(4);

    // The check reads back through the Roster API.
    GetServiceResponse service = RegistryGrpc.newBlockingStub(loopback.channel())
        .withDeadlineAfter(10, TimeUnit.SECONDS).getService(io.roster.proto.v1.GetServiceRequest.newBuilder()
            .setService(TestSession.key("api")).build());
    assertThat(service.getHealthChecksList()).singleElement().satisfies(c -> {
      assertThat(c.getCluster()).isEqualTo("DEFAULT");
      assertThat(c.getType()).isEqualTo(HealthCheckType.HEALTH_CHECK_TYPE_HTTP);
      assertThat(c.getPath()).isEqualTo("/health");
      assertThat(c.getHeadersMap()).containsEntry("X-Probe", "roster");
    });
  }

  @Test
  void aClusterWithoutAProbeKeepsWhatTheApiSets() throws Exception {
    RegistryGrpc.RegistryBlockingStub registry = RegistryGrpc.newBlockingStub(loopback.channel())
        .withDeadlineAfter(10, TimeUnit.SECONDS);
    registry.updateService(UpdateServiceRequest.newBuilder().setService(TestSession.key("legacy"))
        .addHealthChecks(io.roster.proto.v1.HealthCheck.newBuilder().setType(HealthCheckType.HEALTH_CHECK_TYPE_NONE))
        .build());
    // Nothing listens on port 1: a probe would fail at once.
    call("POST", "/nacos/v1/ns/instance", "serviceName=legacy&ip=127.0.0.1&port=1&ephemeral=false");
    TestSession consumer = loopback.open(loopback.newChannel()).hello("consumer");
    assertThat(consumer.subscribe("legacy").getOk()).isTrue();
    consumer.awaitPush("legacy", i -> healthy(i, 1));
    org.awaitility.Awaitility.await().during(TestTime.scaled(INTERVAL.multipliedBy(3)))
        .atMost(TestTime.scaled(INTERVAL.multipliedBy(6)))
        .until(() -> loopback.server().registry().instance(io.roster.server.model.ServiceKey.of("", "", "legacy"),
            new io.roster.server.model.InstanceKey("127.0.0.1", 1, "DEFAULT")).healthy());
  }

  @Test
  void badChecksAreRefusedNamingTheFieldAndChangeNothing() throws Exception {
    assertThat(call("PUT", "/nacos/v1/ns/cluster", "serviceName=api&clusterName=DEFAULT&healthChecker="
        + enc("{\"type\":\"HTTP\",\"path\":\"http://169.254.169.254/latest\"}")))
        .satisfies(a -> assertThat(a.status()).isEqualTo(400))
        .satisfies(a -> assertThat(a.body()).startsWith("health_check.path: \"http://169.254.169.254/latest\"")
            .contains("starts with one \"/\""));
    assertThat(call("PUT", "/nacos/v1/ns/cluster", "serviceName=api&clusterName=DEFAULT&healthChecker="
        + enc("{\"type\":\"HTTP\",\"path\":\"/\",\"headers\":\"Host:internal\"}")).body())
        .startsWith("health_check.headers: \"Host\"");
    assertThat(call("PUT", "/nacos/v1/ns/cluster", "serviceName=api&clusterName=DEFAULT&healthChecker="
        + enc("{\"type\":\"HTTP\",\"path\":\"/\",\"headers\":\"X-A:b\\r\\nHost: evil\"}")).status()).isEqualTo(400);
    assertThat(call("PUT", "/nacos/v1/ns/cluster", "serviceName=api&clusterName=DEFAULT&useInstancePort4Check=false"
        + "&checkPort=70000").body()).startsWith("checkPort: 70000");
    assertThat(call("PUT", "/nacos/v1/ns/cluster", "serviceName=api&clusterName=DEFAULT&healthChecker="
        + enc("{\"type\":\"MYSQL\"}")).body()).startsWith("healthChecker.type: \"MYSQL\" (expected: TCP, HTTP or NONE)");
    assertThat(call("PUT", "/nacos/v1/ns/cluster", "serviceName=api&healthChecker=" + enc("{\"type\":\"TCP\"}")).body())
        .startsWith("clusterName");
    assertThat(call("PUT", "/nacos/v1/ns/cluster", "serviceName=api&clusterName=DEFAULT&healthChecker="
        + enc("{\"type\":\"HTTP\",\"path\":\"/\",\"timeout\":2000}")))
        .as("a per-check timeout is refused, not silently ignored")
        .satisfies(a -> assertThat(a.status()).isEqualTo(400))
        .satisfies(a -> assertThat(a.body()).startsWith("healthChecker.timeout: \"2000\" (expected: no timeout"));
    assertThat(loopback.server().registry().settings(io.roster.server.model.ServiceKey.of("", "", "api")).checks())
        .as("nothing kept from refused calls").isEmpty();

    StatusRuntimeException refused = org.assertj.core.api.Assertions.catchThrowableOfType(StatusRuntimeException.class,
        () -> RegistryGrpc.newBlockingStub(loopback.channel()).withDeadlineAfter(10, TimeUnit.SECONDS).updateService(
            UpdateServiceRequest.newBuilder().setService(TestSession.key("api")).addHealthChecks(
                io.roster.proto.v1.HealthCheck.newBuilder().setType(HealthCheckType.HEALTH_CHECK_TYPE_HTTP)
                    .setPath("/").setExpectedStatus(700)).build()));
    assertThat(refused.getStatus().getDescription()).startsWith("health_check.expected_status: 700");
  }
}
