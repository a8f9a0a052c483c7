package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegisterInstanceRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.server.model.InstanceKey;
import io.roster.server.probe.HealthProbes;
import io.roster.server.testing.process.LocalCluster;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Server-side probes on three member processes (docs/persistence.md, "Server-side probes"): the
 * persistent instances are shared among the members; when a member is killed with -9, the
 * targets it probed are taken over, so a target that stopped with it is still found unhealthy,
 * while the others stay healthy.
 */
class ClusterProbesTest {

  private static final int TARGETS = 24;
  private static final ServiceKey DB = ServiceKey.newBuilder().setName("db").build();

  @RegisterExtension
  final LocalClusterExtension local = new LocalClusterExtension();
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final Map<Integer, ServerSocket> targets = new HashMap<>();

  @AfterEach
  void close() throws Exception {
    for (ManagedChannel c : channels) {
      c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    for (ServerSocket s : targets.values()) {
      s.close();
    }
  }

  private RegistryGrpc.RegistryBlockingStub registry(LocalCluster cluster, int member) {
    ManagedChannel c = NettyChannelBuilder.forTarget(cluster.address(member)).usePlaintext().build();
    channels.add(c);
    return RegistryGrpc.newBlockingStub(c);
  }

  private static RegistryGrpc.RegistryBlockingStub deadline(RegistryGrpc.RegistryBlockingStub stub) {
    return stub.withDeadlineAfter(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Port → healthy, as {@code stub}'s member sees it. */
  private static Map<Integer, Boolean> health(RegistryGrpc.RegistryBlockingStub stub) {
    return deadline(stub).queryInstances(QueryInstancesRequest.newBuilder().setService(DB).build()).getServiceInfo()
        .getInstancesList().stream().collect(Collectors.toMap(Instance::getPort, Instance::getHealthy));
  }

  /** Member {@code m}'s {@code roster_probe_targets}, from its metrics. */
  private static long probeTargets(LocalCluster cluster, int m) throws Exception {
    return Scrape.value(cluster.node(m), "roster_probe_targets");
  }

  @Test
  void aKilledProbersTargetsAreTakenOverAndAStoppedOneIsFoundUnhealthy() throws Exception {
    LocalCluster cluster = local.start("--probe-interval", "1s");
    RegistryGrpc.RegistryBlockingStub first = registry(cluster, 0);
    for (int i = 0; i < TARGETS; i++) {
      ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      targets.put(s.getLocalPort(), s);
      deadline(first).registerInstance(RegisterInstanceRequest.newBuilder().setService(DB)
          .setInstance(Instance.newBuilder().setIp("127.0.0.1").setPort(s.getLocalPort())).build());
    }
    List<String> ids = new ArrayList<>();
    for (int m = 0; m < cluster.size(); m++) {
      ids.add(cluster.id(m));
    }
    ids.sort(null);
    Map<String, List<Integer>> byMember = new HashMap<>();
    for (int port : targets.keySet()) {
      String prober = HealthProbes.prober(io.roster.server.model.ServiceKey.of("", "", "db"),
          new InstanceKey("127.0.0.1", port, "DEFAULT"), ids);
      byMember.computeIfAbsent(prober, k -> new ArrayList<>()).add(port);
    }
    assertThat(byMember).as("every member probes some").hasSize(3);

    // A follower that probes some targets: killed, and its targets stopped with it.
    int leader = cluster.leader();
    int victim = (leader + 1) % cluster.size();
    List<Integer> orphaned = byMember.get(cluster.id(victim));
    int survivor = (victim + 1) % cluster.size();
    RegistryGrpc.RegistryBlockingStub other = registry(cluster, survivor);
    await().atMost(Timing.seconds(10)).untilAsserted(() -> assertThat(health(other)).hasSize(TARGETS)
        .allSatisfy((port, healthy) -> assertThat(healthy).as("port %s", port).isTrue()));

    int third = 3 - victim - survivor;
    // Each member probes exactly the targets the test's own ranking gives it.
    for (int m = 0; m < cluster.size(); m++) {
      int member = m;
      await().atMost(Timing.seconds(10)).untilAsserted(() -> assertThat(probeTargets(cluster, member))
          .isEqualTo(byMember.get(cluster.id(member)).size()));
    }
    long killed = System.nanoTime();
    cluster.node(victim).kill9();
    int stopped = orphaned.get(0);
    targets.remove(stopped).close();
    // The survivors take the killed member's targets over once the leader records it down.
    await().atMost(Timing.seconds(10)).pollInterval(Duration.ofMillis(50)).untilAsserted(() ->
        assertThat(probeTargets(cluster, survivor) + probeTargets(cluster, third)).isEqualTo(TARGETS));
    long takenOverMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
    System.out.printf("ClusterProbesTest: the killed member's %d targets taken over %d ms after the kill "
        + "(member-down-after 3s; each is first probed within 1 s of that)%n", orphaned.size(), takenOverMs);
    await().atMost(Timing.seconds(20)).ignoreException(StatusRuntimeException.class)
        .untilAsserted(() -> assertThat(health(other)).containsEntry(stopped, false));
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
    System.out.printf("ClusterProbesTest: a target probed by the killed member found unhealthy %d ms after the "
        + "kill (member-down-after 3s, takeover, then 3 failed probes 1s apart)%n", tookMs);
    Map<Integer, Boolean> now = health(other);
    assertThat(now).hasSize(TARGETS);
    for (int port : targets.keySet()) {
      assertThat(now.get(port)).as("port %s, still listening", port).isTrue();
    }
    // The stopped target is back: healthy again, by a probe of the member that took it over.
    ServerSocket back = new ServerSocket();
    back.setReuseAddress(true);
    back.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), stopped));
    targets.put(stopped, back);
    await().atMost(Timing.seconds(10)).untilAsserted(() -> assertThat(health(other)).containsEntry(stopped, true));
    assertThat(Set.copyOf(ids)).hasSize(3);
  }
}
