package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.DeregisterInstanceRequest;
import io.roster.proto.v1.GetServiceRequest;
import io.roster.proto.v1.GetServiceResponse;
import io.roster.proto.v1.HealthCheck;
import io.roster.proto.v1.HealthCheckType;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.RegisterInstanceRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.proto.v1.UpdateInstanceRequest;
import io.roster.proto.v1.UpdateServiceRequest;
import io.roster.server.testing.process.LocalCluster;
import io.roster.server.testing.process.ServerProcess;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Durable state in a three-member cluster (docs/persistence.md): 1,000 persistent instances, a
 * service's settings and an instance taken out of traffic survive the leader's kill -9 and then
 * the kill -9 of every member at once: after the restart every member holds exactly what was
 * committed, nothing lost and nothing deregistered come back.
 */
class ClusterDurableTest {

  private static final int SERVICES = 10;
  private static final int PER_SERVICE = 100;

  @RegisterExtension
  final LocalClusterExtension local = new LocalClusterExtension();
  private final List<ManagedChannel> channels = new ArrayList<>();

  @AfterEach
  void close() throws InterruptedException {
    for (ManagedChannel c : channels) {
      c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private RegistryGrpc.RegistryBlockingStub registry(LocalCluster cluster, int member) {
    ManagedChannel c = NettyChannelBuilder.forTarget(cluster.address(member)).usePlaintext().build();
    channels.add(c);
    return RegistryGrpc.newBlockingStub(c);
  }

  private static ServiceKey service(int s) {
    return ServiceKey.newBuilder().setName("db-" + s).build();
  }

  private static RegistryGrpc.RegistryBlockingStub deadline(RegistryGrpc.RegistryBlockingStub stub) {
    return stub.withDeadlineAfter(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
  }

  @Test
  void persistentStateSurvivesTheLeadersDeathAndAWholeClusterRestart() throws Exception {
    LocalCluster cluster = local.start();
    RegistryGrpc.RegistryBlockingStub first = registry(cluster, 0);
    // Nothing listens at these addresses: health is the API's (no probe), and the checks are
    // durable settings like the rest.
    for (int s = 0; s < SERVICES; s++) {
      deadline(first).updateService(UpdateServiceRequest.newBuilder().setService(service(s)).addHealthChecks(
          HealthCheck.newBuilder().setType(HealthCheckType.HEALTH_CHECK_TYPE_NONE)).build());
    }
    // A service's hundred at once: the member gathers them into a few log entries.
    RegistryGrpc.RegistryFutureStub async = RegistryGrpc.newFutureStub(channels.get(0));
    for (int s = 0; s < SERVICES; s++) {
      List<com.google.common.util.concurrent.ListenableFuture<?>> calls = new ArrayList<>();
      for (int i = 0; i < PER_SERVICE; i++) {
        calls.add(async.withDeadlineAfter(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS).registerInstance(
            RegisterInstanceRequest.newBuilder().setService(service(s))
                .setInstance(Instance.newBuilder().setIp("10.1." + s + "." + (i + 1)).setPort(5432)).build()));
      }
      for (var call : calls) {
        call.get();
      }
    }
    deadline(first).updateService(UpdateServiceRequest.newBuilder().setService(service(0)).setProtectThreshold(0.4)
        .putMetadata("tier", "gold").build());
    deadline(first).updateInstance(UpdateInstanceRequest.newBuilder().setService(service(1)).setIp("10.1.1.1")
        .setPort(5432).setEnabled(false).build());
    assertThat(deadline(first).deregisterInstance(DeregisterInstanceRequest.newBuilder().setService(service(2))
        .setIp("10.1.2.1").setPort(5432).build()).getDeregistered()).isTrue();

    int leader = leader(cluster);
    cluster.node(leader).kill9();
    int survivor = (leader + 1) % cluster.size();
    RegistryGrpc.RegistryBlockingStub other = registry(cluster, survivor);
    // Writes go on through a survivor once a new leader is elected.
    await().atMost(Timing.seconds(30)).ignoreException(StatusRuntimeException.class).untilAsserted(() ->
        deadline(other).registerInstance(RegisterInstanceRequest.newBuilder().setService(service(3))
            .setInstance(Instance.newBuilder().setIp("10.1.3.200").setPort(5432)).build()));

    for (int m = 0; m < cluster.size(); m++) {
      if (cluster.node(m).isAlive()) {
        cluster.node(m).kill9();
      }
    }
    for (int m = 0; m < cluster.size(); m++) {
      cluster.relaunch(m);
    }
    for (int m = 0; m < cluster.size(); m++) {
      cluster.node(m).awaitServing(Timing.seconds(60));
    }

    for (int m = 0; m < cluster.size(); m++) {
      RegistryGrpc.RegistryBlockingStub stub = registry(cluster, m);
      for (int s = 0; s < SERVICES; s++) {
        int expected = PER_SERVICE + (s == 2 ? -1 : s == 3 ? 1 : 0);
        int service = s;
        await("member " + m + " db-" + s).atMost(Timing.seconds(30)).ignoreException(StatusRuntimeException.class)
            .untilAsserted(() -> assertThat(deadline(stub).getService(GetServiceRequest.newBuilder()
                .setService(service(service)).build()).getInstanceCount()).isEqualTo(expected));
      }
      GetServiceResponse settings = deadline(stub).getService(GetServiceRequest.newBuilder().setService(service(0)).build());
      assertThat(settings.getProtectThreshold()).isEqualTo(0.4);
      assertThat(settings.getMetadataMap()).isEqualTo(Map.of("tier", "gold"));
      assertThat(settings.getHealthChecksList()).singleElement()
          .satisfies(c -> assertThat(c.getType()).isEqualTo(HealthCheckType.HEALTH_CHECK_TYPE_NONE));
      List<String> visible = deadline(stub).queryInstances(io.roster.proto.v1.QueryInstancesRequest.newBuilder()
          .setService(service(1)).build()).getServiceInfo().getInstancesList().stream().map(Instance::getIp).toList();
      assertThat(visible).hasSize(PER_SERVICE - 1).doesNotContain("10.1.1.1");
      List<String> deregistered = deadline(stub).queryInstances(io.roster.proto.v1.QueryInstancesRequest.newBuilder()
          .setService(service(2)).build()).getServiceInfo().getInstancesList().stream().map(Instance::getIp).toList();
      assertThat(deregistered).doesNotContain("10.1.2.1");
    }

    // A backup of the cluster, restored into a new standalone server: the same durable state.
    var backup = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
        java.net.URI.create("http://" + cluster.node(1).host + ":" + cluster.node(1).httpPort() + "/roster/v1/admin/backup"))
        .timeout(Timing.seconds(30)).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
    assertThat(backup.statusCode()).as(backup.body()).isEqualTo(200);
    java.nio.file.Path file = java.nio.file.Files.createTempFile("roster-backup", ".json");
    java.nio.file.Files.writeString(file, backup.body());
    java.nio.file.Path data = java.nio.file.Files.createTempDirectory("roster-restored");
    try (ServerProcess restored = ServerProcess.start("127.0.0.1", io.roster.server.testing.process.Ports.free(),
        "--data-dir", data.toString(), "--restore", file.toString())) {
      ManagedChannel channel = NettyChannelBuilder.forTarget(restored.address()).usePlaintext().build();
      channels.add(channel);
      RegistryGrpc.RegistryBlockingStub stub = RegistryGrpc.newBlockingStub(channel);
      for (int s = 0; s < SERVICES; s++) {
        int expected = PER_SERVICE + (s == 2 ? -1 : s == 3 ? 1 : 0);
        assertThat(deadline(stub).getService(GetServiceRequest.newBuilder().setService(service(s)).build())
            .getInstanceCount()).as("restored db-%s", s).isEqualTo(expected);
      }
      GetServiceResponse settings = deadline(stub).getService(GetServiceRequest.newBuilder().setService(service(0))
          .build());
      assertThat(settings.getProtectThreshold()).isEqualTo(0.4);
      assertThat(settings.getHealthChecksList()).singleElement()
          .satisfies(c -> assertThat(c.getType()).isEqualTo(HealthCheckType.HEALTH_CHECK_TYPE_NONE));
      assertThat(deadline(stub).queryInstances(io.roster.proto.v1.QueryInstancesRequest.newBuilder()
          .setService(service(1)).build()).getServiceInfo().getInstancesList()).extracting(Instance::getIp)
          .hasSize(PER_SERVICE - 1).doesNotContain("10.1.1.1");

      // The same backup into a new cluster (of one member here): restored through its log once it
      // has caught up.
      int peerPort = io.roster.server.testing.process.Ports.free();
      try (ServerProcess member = ServerProcess.start("127.0.0.1", io.roster.server.testing.process.Ports.free(),
          "--members", "127.0.0.1:" + peerPort, "--peer-port", Integer.toString(peerPort), "--peer-tls", "off",
          "--data-dir", java.nio.file.Files.createTempDirectory("roster-restored-cluster").toString(),
          "--restore", file.toString())) {
        ManagedChannel mc = NettyChannelBuilder.forTarget(member.address()).usePlaintext().build();
        channels.add(mc);
        RegistryGrpc.RegistryBlockingStub ms = RegistryGrpc.newBlockingStub(mc);
        for (int s = 0; s < SERVICES; s++) {
          int expected = PER_SERVICE + (s == 2 ? -1 : s == 3 ? 1 : 0);
          int service = s;
          await("restored cluster db-" + s).atMost(Timing.seconds(30)).ignoreException(StatusRuntimeException.class)
              .untilAsserted(() -> assertThat(deadline(ms).getService(GetServiceRequest.newBuilder()
                  .setService(service(service)).build()).getInstanceCount()).isEqualTo(expected));
        }
        assertThat(deadline(ms).getService(GetServiceRequest.newBuilder().setService(service(0)).build())
            .getProtectThreshold()).isEqualTo(0.4);
      }
    } finally {
      java.nio.file.Files.deleteIfExists(file);
    }
  }

  private static int leader(LocalCluster cluster) {
    var members = cluster.members(0).getMembersList();
    for (int m = 0; m < cluster.size(); m++) {
      String id = cluster.id(m);
      if (members.stream().anyMatch(x -> x.getId().equals(id) && x.getRole().equals("leader"))) {
        return m;
      }
    }
    throw new AssertionError("no leader in " + members);
  }
}
