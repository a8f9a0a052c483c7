package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.GetServiceRequest;
import io.roster.proto.v1.GetServiceResponse;
import io.roster.proto.v1.HealthCheck;
import io.roster.proto.v1.HealthCheckType;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegisterInstanceRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.proto.v1.UpdateInstanceRequest;
import io.roster.proto.v1.UpdateServiceRequest;
import io.roster.server.testing.process.JavaProcess;
import io.roster.server.testing.process.LocalCluster;
import io.roster.server.testing.process.ServerLauncher;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * A rolling upgrade from an older build's jar ({@code -Droster.previous.jar}, as {@code make
 * upgrade-test} builds it from {@code PREVIOUS}) to this one: three members start on the old jar
 * and take persistent instances, settings and an instance out of traffic; each member in turn
 * gets SIGTERM and starts again on this jar with its data, the next once it serves. Every member
 * then holds exactly what was committed, and a change only this build writes (a health check,
 * log format 4) is accepted once all run it. Skipped without the property: it needs a second
 * build, which {@code make test} does not make.
 */
@EnabledIfSystemProperty(named = "roster.previous.jar", matches = ".+")
class RollingUpgradeTest {

  private static final ServiceKey DB = ServiceKey.newBuilder().setName("upgrade-db").build();
  private static final int INSTANCES = 100;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private LocalCluster cluster;

  @AfterEach
  void close() throws Exception {
    for (ManagedChannel c : channels) {
      c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private RegistryGrpc.RegistryBlockingStub registry(int member) {
    ManagedChannel c = NettyChannelBuilder.forTarget(cluster.address(member)).usePlaintext().build();
    channels.add(c);
    return RegistryGrpc.newBlockingStub(c);
  }

  private static RegistryGrpc.RegistryBlockingStub deadline(RegistryGrpc.RegistryBlockingStub stub) {
    return stub.withDeadlineAfter(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
  }

  @Test
  void everyMemberMovesToThisBuildInTurnAndNothingIsLost() throws Exception {
    Path previousJar = Path.of(System.getProperty("roster.previous.jar"));
    List<String> jvm = new ArrayList<>(JavaProcess.TEST_JVM_FLAGS);
    jvm.addAll(ServerLauncher.shippedJvmOptions(previousJar));
    ServerLauncher previous = ServerLauncher.of(previousJar, jvm, JavaProcess.LOGS);
    cluster = LocalCluster.builder(previous).size(3).start();

    RegistryGrpc.RegistryBlockingStub first = registry(0);
    for (int i = 1; i <= INSTANCES; i++) {
      deadline(first).registerInstance(RegisterInstanceRequest.newBuilder().setService(DB)
          .setInstance(Instance.newBuilder().setIp("10.9.0." + i).setPort(5432)).build());
    }
    deadline(first).updateService(UpdateServiceRequest.newBuilder().setService(DB).setProtectThreshold(0.25)
        .putMetadata("tier", "gold").build());
    deadline(first).updateInstance(UpdateInstanceRequest.newBuilder().setService(DB).setIp("10.9.0.1").setPort(5432)
        .setEnabled(false).build());

    ServerLauncher current = ServerLauncher.forTests();
    for (int m = 0; m < cluster.size(); m++) {
      cluster.node(m).stop();
      cluster.relaunch(m, current).awaitServing(Duration.ofSeconds(60));
    }

    for (int m = 0; m < cluster.size(); m++) {
      RegistryGrpc.RegistryBlockingStub stub = registry(m);
      await("member " + m).atMost(Timing.seconds(30)).ignoreException(StatusRuntimeException.class)
          .untilAsserted(() -> assertThat(deadline(stub).getService(GetServiceRequest.newBuilder().setService(DB)
              .build()).getInstanceCount()).isEqualTo(INSTANCES));
      GetServiceResponse service = deadline(stub).getService(GetServiceRequest.newBuilder().setService(DB).build());
      assertThat(service.getProtectThreshold()).isEqualTo(0.25);
      assertThat(service.getMetadataMap()).isEqualTo(Map.of("tier", "gold"));
      assertThat(deadline(stub).queryInstances(QueryInstancesRequest.newBuilder().setService(DB).build())
          .getServiceInfo().getInstancesList()).extracting(Instance::getIp).hasSize(INSTANCES - 1)
          .doesNotContain("10.9.0.1");
    }
    // All on this build: what only it writes is accepted and reaches every member.
    await().atMost(Timing.seconds(30)).ignoreException(StatusRuntimeException.class).untilAsserted(() ->
        deadline(registry(1)).updateService(UpdateServiceRequest.newBuilder().setService(DB).addHealthChecks(
            HealthCheck.newBuilder().setType(HealthCheckType.HEALTH_CHECK_TYPE_NONE)).build()));
    for (int m = 0; m < cluster.size(); m++) {
      RegistryGrpc.RegistryBlockingStub stub = registry(m);
      await("member " + m + " has the check").atMost(Timing.seconds(10)).untilAsserted(() ->
          assertThat(deadline(stub).getService(GetServiceRequest.newBuilder().setService(DB).build())
              .getHealthChecksList()).hasSize(1));
    }
  }
}
