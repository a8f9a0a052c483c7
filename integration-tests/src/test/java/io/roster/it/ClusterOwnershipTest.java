package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.roster.proto.v1.DeregisterInstanceRequest;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegisterInstanceRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.process.LocalCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who registered a persistent instance is checked by every member as it applies the log, not
 * only by the member that takes the request: identity A registers a persistent instance through
 * member 0; identity B, another writer of the namespace, can neither replace it (weight,
 * metadata) through member 1 nor remove it through member 2, and every member keeps A's instance.
 */
class ClusterOwnershipTest {

  private static final ServiceKey DB = ServiceKey.newBuilder().setName("db").build();

  @RegisterExtension
  final LocalClusterExtension local = new LocalClusterExtension();

  @TempDir Path dir;
  private final java.util.Map<Integer, ManagedChannel> channels = new java.util.HashMap<>();

  @AfterEach
  void close() throws InterruptedException {
    for (ManagedChannel c : channels.values()) {
      c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  @Test
  void anotherIdentityNeitherReplacesNorRemovesAPersistentInstanceThroughAnotherMember() {
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json"));
    String ta = auth.token("ta", "write@public");
    String tb = auth.token("tb", "write@public");
    String reader = auth.token("reader", "read@*");
    LocalCluster cluster = local.start("--auth-file", auth.path().toString());
    Instance.Builder db = Instance.newBuilder().setIp("127.0.0.8").setPort(21902);

    registry(cluster, 0, ta).registerInstance(RegisterInstanceRequest.newBuilder().setService(DB).setInstance(db)
        .build());
    await("A's instance on every member").atMost(Timing.seconds(20)).pollInterval(Duration.ofMillis(100))
        .until(() -> java.util.stream.IntStream.range(0, cluster.size()).allMatch(i -> weights(cluster, i, reader)
            .equals(List.of(1.0))));

    assertThatThrownBy(() -> registry(cluster, 1, tb).registerInstance(RegisterInstanceRequest.newBuilder()
        .setService(DB).setInstance(db.clone().setWeight(7).putMetadata("by", "B")).build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
          assertThat(e.getStatus().getDescription()).contains("is registered by \"ta\"");
        });
    assertThatThrownBy(() -> registry(cluster, 2, tb).deregisterInstance(DeregisterInstanceRequest.newBuilder()
        .setService(DB).setIp("127.0.0.8").setPort(21902).build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));

    // A's own change after B's attempts: once every member has it, every member has applied B's too.
    registry(cluster, 2, ta).registerInstance(RegisterInstanceRequest.newBuilder().setService(DB)
        .setInstance(db.clone().setWeight(2)).build());
    await("A's change on every member").atMost(Timing.seconds(20)).pollInterval(Duration.ofMillis(100))
        .until(() -> java.util.stream.IntStream.range(0, cluster.size()).allMatch(i -> weights(cluster, i, reader)
            .equals(List.of(2.0))));
    for (int i = 0; i < cluster.size(); i++) {
      assertThat(query(cluster, i, reader).get(0).getMetadataMap()).as("member %d", i).doesNotContainKey("by");
    }
  }

  private List<Double> weights(LocalCluster cluster, int member, String token) {
    return query(cluster, member, token).stream().map(Instance::getWeight).toList();
  }

  private List<Instance> query(LocalCluster cluster, int member, String token) {
    return registry(cluster, member, token).queryInstances(QueryInstancesRequest.newBuilder().setService(DB).build())
        .getServiceInfo().getInstancesList();
  }

  private RegistryGrpc.RegistryBlockingStub registry(LocalCluster cluster, int member, String token) {
    ManagedChannel c = channels.computeIfAbsent(member,
        m -> NettyChannelBuilder.forTarget(cluster.address(m)).usePlaintext().build());
    Metadata m = new Metadata();
    m.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
    return RegistryGrpc.newBlockingStub(c).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(m))
        .withDeadlineAfter(10, TimeUnit.SECONDS);
  }
}
