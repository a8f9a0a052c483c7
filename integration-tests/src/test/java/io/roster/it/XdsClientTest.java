package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.roster.client.Instance;
import io.roster.client.RosterClient;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * grpc-java's own xDS client (grpc-xds), with nothing of Roster's linked in, against a real
 * server process (docs/xds.md): a channel on {@code xds:///<service>} whose bootstrap points at
 * Roster round-robins over the service's three registered backends; a deregistered backend stops
 * receiving calls, a newly registered one starts, and one whose provider process is killed with -9
 * leaves the rotation; two backends of weights 1 and 3 get calls in about that ratio. Node's
 * grpc-js with grpc-js-xds (from {@code make tools}) does the same, skipped where node or the
 * package is absent except in CI.
 */
class XdsClientTest {

  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
  }

  private HealthBackend backend() throws Exception {
    HealthBackend b = HealthBackend.start();
    closing.add(b);
    return b;
  }

  private ServerProcess roster;
  private RosterClient provider;

  /** A server process and three backends registered as {@code xds-orders}. */
  private List<HealthBackend> threeBackends() throws Exception {
    roster = ServerProcess.start("127.0.0.1", Ports.free());
    closing.add(roster);
    provider = RosterClient.builder().serverAddresses(roster.address()).clientName("xds-provider")
        .drainTimeout(Duration.ZERO).requestTimeout(Timing.seconds(15)).build();
    closing.add(provider);
    List<HealthBackend> backends = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      backends.add(backend());
      provider.registerInstance("xds-orders", Instance.of("127.0.0.1", backends.get(i).port()));
    }
    return backends;
  }

  /** A server process and two backends registered as {@code xds-orders} with weights 1 and 3. */
  private List<HealthBackend> weightedBackends() throws Exception {
    roster = ServerProcess.start("127.0.0.1", Ports.free());
    closing.add(roster);
    provider = RosterClient.builder().serverAddresses(roster.address()).clientName("xds-provider")
        .drainTimeout(Duration.ZERO).requestTimeout(Timing.seconds(15)).build();
    closing.add(provider);
    List<HealthBackend> backends = List.of(backend(), backend());
    provider.registerInstance("xds-orders", Instance.of("127.0.0.1", backends.get(0).port()).withWeight(1));
    provider.registerInstance("xds-orders", Instance.of("127.0.0.1", backends.get(1).port()).withWeight(3));
    return backends;
  }

  /** That over {@code calls} calls the backend of weight 3 got between 2 and 4.5 times the calls of the one of weight 1. */
  private static void assertOneToThree(List<HealthBackend> backends, int calls) {
    int light = backends.get(0).calls().get();
    int heavy = backends.get(1).calls().get();
    assertThat(light + heavy).isGreaterThanOrEqualTo(calls);
    assertThat(light).as("calls to the backend of weight 1 (weight 3: %d)", heavy).isPositive();
    assertThat((double) heavy / light).as("weight 3 : weight 1 calls (%d : %d)", heavy, light).isBetween(2.0, 4.5);
  }

  private String bootstrap() {
    return "{\"xds_servers\": [{\"server_uri\": \"" + roster.address()
        + "\", \"channel_creds\": [{\"type\": \"insecure\"}], \"server_features\": [\"xds_v3\"]}],"
        + " \"node\": {\"id\": \"xds-client-test\", \"locality\": {\"zone\": \"test\"}}}";
  }

  @Test
  void nodesGrpcJsXdsClientRoundRobinsAndFollowsADeregistration() throws Exception {
    Path node = requireNode();
    Path tools = Path.of("../.tools").toAbsolutePath().normalize();
    List<HealthBackend> backends = threeBackends();
    assertThat(runNode(node, tools, 30)).startsWith("OK 30");
    assertThat(backends).allSatisfy(b -> assertThat(b.calls().get()).as("round robin").isGreaterThanOrEqualTo(5));

    provider.deregisterInstance("xds-orders", Instance.of("127.0.0.1", backends.get(0).port()));
    int before = backends.get(0).calls().get();
    assertThat(runNode(node, tools, 15)).startsWith("OK 15");
    assertThat(backends.get(0).calls().get()).as("calls to the deregistered backend").isEqualTo(before);
  }

  @Test
  void nodesGrpcJsXdsClientHonoursInstanceWeights() throws Exception {
    Path node = requireNode();
    Path tools = Path.of("../.tools").toAbsolutePath().normalize();
    List<HealthBackend> backends = weightedBackends();
    assertThat(runNode(node, tools, 800)).startsWith("OK 800");
    assertOneToThree(backends, 800);
  }

  @Test
  void grpcJavasXdsClientHonoursInstanceWeights(@TempDir Path dir) throws Exception {
    List<HealthBackend> backends = weightedBackends();
    Path bootstrap = Files.writeString(dir.resolve("bootstrap.json"), bootstrap());
    XdsClientProcess client = new XdsClientProcess(bootstrap, "xds:///xds-orders", 800, false);
    closing.add(client);
    assertThat(client.process.waitFor(Timing.seconds(60).toMillis(), TimeUnit.MILLISECONDS)).as(client.output()).isTrue();
    assertThat(client.output()).contains("OK 800");
    assertOneToThree(backends, 800);
  }

  /** Node, and grpc-js-xds installed under .tools/; the test is skipped without them, except in CI. */
  private static Path requireNode() {
    Path node = ExternalTools.require("node", "ROSTER_NODE", "nodejs", "Node's xDS test is skipped");
    Path tools = Path.of("../.tools").toAbsolutePath().normalize();
    boolean installed = Files.isRegularFile(tools.resolve("node_modules/@grpc/grpc-js-xds/package.json"));
    if (!installed && "true".equals(System.getenv("CI"))) {
      throw new AssertionError("@grpc/grpc-js-xds is required in CI (.ci/run runs make tools)");
    }
    Assumptions.assumeTrue(installed, "@grpc/grpc-js-xds is not installed under .tools/ (make tools installs it): "
        + "Node's xDS test is skipped");
    return node;
  }

  /** Whether ten calls in a row all went to other backends than {@code b}. */
  private static boolean missedByTenCalls(HealthBackend b, HealthGrpc.HealthBlockingStub health) {
    int before = b.calls().get();
    for (int i = 0; i < 10; i++) {
      health.withDeadlineAfter(5, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());
    }
    return b.calls().get() == before;
  }

  /** xds-client.mjs in a node process, with the bootstrap in its environment; its output. */
  private String runNode(Path node, Path tools, int calls) throws Exception {
    Path script = Path.of("src/test/js/xds-client.mjs").toAbsolutePath();
    ProcessBuilder pb = new ProcessBuilder(node.toString(), script.toString(), "xds:///xds-orders",
        Integer.toString(calls)).redirectErrorStream(true);
    pb.environment().put("GRPC_XDS_BOOTSTRAP_CONFIG", bootstrap());
    pb.environment().put("ROSTER_TOOLS", tools.toString());
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(out).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return out;
  }

  @Test
  void aGrpcChannelOnXdsRoundRobinsOverTheRegisteredInstancesAndFollowsThem() throws Exception {
    List<HealthBackend> backends = threeBackends();
    System.setProperty("io.grpc.xds.bootstrapConfig", bootstrap());
    ManagedChannel channel = Grpc.newChannelBuilder("xds:///xds-orders", InsecureChannelCredentials.create()).build();
    closing.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(channel);

    await().atMost(Timing.seconds(30)).ignoreExceptions().untilAsserted(() -> {
      health.withDeadlineAfter(5, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());
      assertThat(backends).allSatisfy(b -> assertThat(b.calls().get()).isPositive());
    });
    for (int i = 0; i < 30; i++) {
      health.withDeadlineAfter(5, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());
    }
    assertThat(backends).allSatisfy(b -> assertThat(b.calls().get()).as("round robin").isGreaterThanOrEqualTo(8));

    // A deregistered backend stops receiving calls.
    provider.deregisterInstance("xds-orders", Instance.of("127.0.0.1", backends.get(0).port()));
    long deregistered = System.nanoTime();
    await().atMost(Timing.seconds(10)).until(() -> missedByTenCalls(backends.get(0), health));
    System.out.println("deregistered backend out of the xDS client's rotation within "
        + Duration.ofNanos(System.nanoTime() - deregistered).toMillis() + " ms");

    // A new backend starts receiving calls; its provider, another process, killed with -9, takes it out.
    HealthBackend fresh = backend();
    ProviderProcess owner = new ProviderProcess(roster.address(), "xds-orders", "127.0.0.1", fresh.port());
    closing.add(owner);
    owner.awaitRegistered();
    await().atMost(Timing.seconds(10)).until(() -> {
      health.withDeadlineAfter(5, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());
      return fresh.calls().get() > 0;
    });
    owner.kill9();
    long killed = System.nanoTime();
    await().atMost(Timing.seconds(30)).until(() -> missedByTenCalls(fresh, health));
    System.out.println("a kill -9'd provider's backend out of the xDS client's rotation within "
        + Duration.ofNanos(System.nanoTime() - killed).toMillis() + " ms");
  }
}
