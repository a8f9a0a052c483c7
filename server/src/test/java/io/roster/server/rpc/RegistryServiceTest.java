package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.roster.proto.v1.AdminGrpc;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.GetServiceRequest;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.ListConnectionsRequest;
import io.roster.proto.v1.ListServicesRequest;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.QueryInstancesResponse;
import io.roster.proto.v1.RegisterInstance;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceInfo;
import io.roster.proto.v1.UpdateInstanceRequest;
import io.roster.proto.v1.UpdateServiceRequest;
import io.roster.proto.v1.WatchRequest;
import io.roster.server.RosterServer;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.StreamRecorder;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Registry, Admin and health over real loopback sockets. */
class RegistryServiceTest {

  /** A bound for what normally takes milliseconds, scaled by the test time factor. */
  private static final Duration WAIT = TestTime.seconds(10);

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults();

  private TestSession provider;
  private RegistryGrpc.RegistryBlockingStub registry;

  @BeforeEach
  void connect() {
    provider = loopback.session("provider");
    registry = RegistryGrpc.newBlockingStub(loopback.channel()).withDeadlineAfter(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void register(String service, String ip, String cluster) {
    assertThat(provider.request(ClientFrame.newBuilder().setRegister(RegisterInstance.newBuilder()
        .setService(TestSession.key(service))
        .setInstance(Instance.newBuilder().setIp(ip).setPort(80).setCluster(cluster)))).getOk()).isTrue();
  }

  @Test
  void queryHonoursClustersAndKnownChecksum() {
    register("orders", "10.0.0.1", "a");
    register("orders", "10.0.0.2", "b");
    QueryInstancesResponse all = registry.queryInstances(QueryInstancesRequest.newBuilder()
        .setService(TestSession.key("orders")).build());
    assertThat(all.getNotModified()).isFalse();
    assertThat(all.getServiceInfo().getInstancesList()).extracting(Instance::getIp).containsExactly("10.0.0.1", "10.0.0.2");
    assertThat(all.getServiceInfo().getService().getNamespace()).isEqualTo("public");

    QueryInstancesResponse onlyA = registry.queryInstances(QueryInstancesRequest.newBuilder()
        .setService(TestSession.key("orders")).addClusters("a").build());
    assertThat(onlyA.getServiceInfo().getInstancesList()).extracting(Instance::getIp).containsExactly("10.0.0.1");

    QueryInstancesResponse same = registry.queryInstances(QueryInstancesRequest.newBuilder()
        .setService(TestSession.key("orders")).setKnownChecksum(all.getServiceInfo().getChecksum()).build());
    assertThat(same.getNotModified()).isTrue();
    assertThat(same.getServiceInfo().getInstancesCount()).isZero();
    assertThat(same.getServiceInfo().getRevision()).isEqualTo(all.getServiceInfo().getRevision());

    register("orders", "10.0.0.3", "a");
    QueryInstancesResponse changed = registry.queryInstances(QueryInstancesRequest.newBuilder()
        .setService(TestSession.key("orders")).setKnownChecksum(all.getServiceInfo().getChecksum()).build());
    assertThat(changed.getNotModified()).isFalse();
    assertThat(changed.getServiceInfo().getRevision()).isGreaterThan(all.getServiceInfo().getRevision());
  }

  @Test
  void queryOfABadNameIsInvalidArgumentNamingTheField() {
    assertThatThrownBy(() -> registry.queryInstances(QueryInstancesRequest.newBuilder()
        .setService(TestSession.key("")).build()))
        .isInstanceOf(StatusRuntimeException.class)
        .hasMessage("INVALID_ARGUMENT: service.name: \"\" (expected: 1..512 characters of [A-Za-z0-9_.:/@-])");
  }

  @Test
  void listServicesPagesAndGetServiceCounts() {
    for (String s : new String[] {"c", "a", "b"}) {
      register(s, "10.0.0.1", "");
    }
    var page1 = registry.listServices(ListServicesRequest.newBuilder().setPageNo(1).setPageSize(2).build());
    assertThat(page1.getTotal()).isEqualTo(3);
    assertThat(page1.getServicesList()).extracting(k -> k.getName()).containsExactly("a", "b");
    var page2 = registry.listServices(ListServicesRequest.newBuilder().setPageNo(2).setPageSize(2).build());
    assertThat(page2.getServicesList()).extracting(k -> k.getName()).containsExactly("c");
    assertThatThrownBy(() -> registry.listServices(ListServicesRequest.newBuilder().setPageSize(5000).build()))
        .hasMessage("INVALID_ARGUMENT: page_size: 5000 (expected: 1..1000)");

    var svc = registry.getService(GetServiceRequest.newBuilder().setService(TestSession.key("a")).build());
    assertThat(svc.getInstanceCount()).isEqualTo(1);
    assertThat(svc.getHealthyCount()).isEqualTo(1);
    assertThatThrownBy(() -> registry.getService(GetServiceRequest.newBuilder()
        .setService(TestSession.key("nope")).build())).hasMessageStartingWith("NOT_FOUND");
  }

  @Test
  void watchStreamsCurrentStateThenChanges() throws Exception {
    register("orders", "10.0.0.1", "");
    StreamRecorder<ServiceInfo> seen = new StreamRecorder<>();
    var ctx = io.grpc.Context.current().withCancellation();
    ctx.run(() -> RegistryGrpc.newStub(loopback.channel()).watch(
        WatchRequest.newBuilder().setService(TestSession.key("orders")).build(), seen));
    assertThat(seen.next().getInstancesCount()).isEqualTo(1);
    register("orders", "10.0.0.2", "");
    assertThat(seen.next().getInstancesCount()).isEqualTo(2);
    assertThat(registry.getService(GetServiceRequest.newBuilder().setService(TestSession.key("orders")).build())
        .getSubscriberCount()).isEqualTo(1);
    ctx.cancel(null);
    org.awaitility.Awaitility.await().atMost(WAIT).until(() -> registry.getService(
        GetServiceRequest.newBuilder().setService(TestSession.key("orders")).build()).getSubscriberCount() == 0);
  }

  /**
   * A Watch is live on a server with a 5-minute shutdown grace: its first message is the
   * current state of the watched service (the instance a session registered there). Closing
   * the server ends the watch with UNAVAILABLE at once instead of waiting out the grace.
   */
  @Test
  void shutdownEndsWatchesInsteadOfWaitingOutTheGrace() throws Exception {
    try (LoopbackServer fixture = LoopbackServer.with(b -> b.shutdownGrace(Duration.ofMinutes(5)))) {
      RosterServer other = fixture.start();
      TestSession owner = fixture.session("owner");
      assertThat(owner.register("orders", "10.0.0.9", 80).getOk()).isTrue();
      StreamRecorder<ServiceInfo> seen = new StreamRecorder<>();
      RegistryGrpc.newStub(fixture.channel()).watch(WatchRequest.newBuilder().setService(TestSession.key("orders")).build(),
          seen);
      ServiceInfo first = seen.next();
      assertThat(first).as("the watch's first message within %s", WAIT).isNotNull();
      assertThat(first.getService().getName()).isEqualTo("orders");
      assertThat(first.getService().getNamespace()).isEqualTo("public");
      assertThat(first.getInstancesList()).extracting(Instance::getIp).containsExactly("10.0.0.9");
      assertThat(first.getRevision()).isPositive();
      owner.close(); // the only session: gone, the close below waits for nothing but the watch

      // With a 5-minute grace, close() returns only because the watch was ended.
      assertTimeoutPreemptively(TestTime.seconds(30), other::close);
      Status status = seen.awaitEnd();
      assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(status.getDescription()).contains("server shutting down");
    }
  }

  @Test
  void updateInstanceTakesItOutOfTrafficAndBackWithoutLosingAnything() {
    register("orders", "10.0.0.1", "");
    register("orders", "10.0.0.2", "");
    TestSession watcher = loopback.session("watcher");
    watcher.subscribe("orders");
    watcher.awaitPush("orders", i -> i.getInstancesCount() == 2);
    UpdateInstanceRequest.Builder base = UpdateInstanceRequest.newBuilder()
        .setService(TestSession.key("orders")).setIp("10.0.0.1").setPort(80);

    var off = registry.updateInstance(base.clone().setEnabled(false).putMetadata("state", "draining").build());
    assertThat(off.getInstance().getEnabled()).isFalse();
    assertThat(off.getInstance().getMetadataMap()).containsEntry("state", "draining");
    watcher.awaitPush("orders", i -> i.getInstancesCount() == 1);
    assertThat(registry.queryInstances(QueryInstancesRequest.newBuilder().setService(TestSession.key("orders")).build())
        .getServiceInfo().getInstancesList()).extracting(io.roster.proto.v1.Instance::getIp).containsExactly("10.0.0.2");

    var on = registry.updateInstance(base.clone().setEnabled(true).setWeight(3).build());
    assertThat(on.getInstance().getWeight()).isEqualTo(3);
    assertThat(on.getInstance().getMetadataMap()).as("merged, not replaced").containsEntry("state", "draining");
    watcher.awaitPush("orders", i -> i.getInstancesCount() == 2);
  }

  @Test
  void updateInstanceErrorsNameTheFieldAndChangeNothing() {
    register("orders", "10.0.0.1", "");
    UpdateInstanceRequest.Builder base = UpdateInstanceRequest.newBuilder()
        .setService(TestSession.key("orders")).setIp("10.0.0.1").setPort(80);

    assertThatThrownBy(() -> registry.updateInstance(base.clone().setEnabled(false).setWeight(20_000).build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).isEqualTo("weight: 20000.0 (expected: 0..10000)");
        });
    assertThatThrownBy(() -> registry.updateInstance(base.clone().setPort(81).setEnabled(false).build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
    assertThat(registry.queryInstances(QueryInstancesRequest.newBuilder().setService(TestSession.key("orders")).build())
        .getServiceInfo().getInstances(0).getEnabled()).isTrue();
  }

  private io.roster.proto.v1.ServiceInfo query(String service, boolean healthyOnly) {
    return registry.queryInstances(QueryInstancesRequest.newBuilder().setService(TestSession.key(service))
        .setHealthyOnly(healthyOnly).build()).getServiceInfo();
  }

  private void threshold(String service, double value) {
    registry.updateService(UpdateServiceRequest.newBuilder().setService(TestSession.key(service))
        .setProtectThreshold(value).build());
  }

  @Test
  void protectThresholdEdgesOffExactlyAtTheRatioJustBelowAndOne() {
    for (int i = 1; i <= 4; i++) {
      register("guarded", "10.0.1." + i, "");
    }
    for (int i = 1; i <= 2; i++) {
      registry.updateInstance(UpdateInstanceRequest.newBuilder().setService(TestSession.key("guarded"))
          .setIp("10.0.1." + i).setPort(80).setHealthy(false).build());
    }
    // Off (0, the default): a dead instance is never reported healthy, never served healthy-only.
    assertThat(query("guarded", true).getInstancesCount()).isEqualTo(2);
    assertThat(query("guarded", true).getProtectThresholdReached()).isFalse();
    assertThat(query("guarded", false).getInstancesList()).filteredOn(i -> !i.getHealthy()).hasSize(2);

    threshold("guarded", 0.5); // healthy / total = 2 / 4 = 0.5: at the threshold counts
    assertThat(query("guarded", true).getInstancesCount()).isEqualTo(4);
    assertThat(query("guarded", true).getProtectThresholdReached()).isTrue();
    assertThat(query("guarded", true).getInstancesList()).filteredOn(i -> !i.getHealthy())
        .as("unhealthy ones are included and marked").hasSize(2);

    threshold("guarded", 0.49);
    assertThat(query("guarded", true).getInstancesCount()).isEqualTo(2);
    assertThat(query("guarded", true).getProtectThresholdReached()).isFalse();

    for (int i = 1; i <= 2; i++) {
      registry.updateInstance(UpdateInstanceRequest.newBuilder().setService(TestSession.key("guarded"))
          .setIp("10.0.1." + i).setPort(80).setHealthy(true).build());
    }
    threshold("guarded", 1); // 4 / 4 <= 1: always reached, and nothing unhealthy to add
    assertThat(query("guarded", true).getProtectThresholdReached()).isTrue();
    assertThat(query("guarded", true).getInstancesCount()).isEqualTo(4);
  }

  @Test
  void aThresholdChangeIsPushedAndServiceSettingsAreValidatedAndShown() {
    register("guarded2", "10.0.2.1", "");
    registry.updateInstance(UpdateInstanceRequest.newBuilder().setService(TestSession.key("guarded2"))
        .setIp("10.0.2.1").setPort(80).setHealthy(false).build());
    TestSession watcher = loopback.session("watcher");
    watcher.subscribe("guarded2");
    watcher.awaitPush("guarded2", i -> i.getInstancesCount() == 1 && !i.getProtectThresholdReached());

    var shown = registry.updateService(UpdateServiceRequest.newBuilder().setService(TestSession.key("guarded2"))
        .setProtectThreshold(0.8).putMetadata("owner", "payments").build());

    assertThat(shown.getProtectThreshold()).isEqualTo(0.8);
    assertThat(shown.getMetadataMap()).containsEntry("owner", "payments");
    watcher.awaitPush("guarded2", io.roster.proto.v1.ServiceInfo::getProtectThresholdReached);
    assertThatThrownBy(() -> registry.updateService(UpdateServiceRequest.newBuilder()
        .setService(TestSession.key("guarded2")).setProtectThreshold(1.5).build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).isEqualTo("protect_threshold: 1.5 (expected: 0..1 (0 turns it off))");
        });
    assertThat(registry.getService(GetServiceRequest.newBuilder().setService(TestSession.key("guarded2")).build())
        .getProtectThreshold()).as("unchanged by the bad request").isEqualTo(0.8);
  }

  @Test
  void adminListsConnectionsAndHealthIsServing() {
    register("orders", "10.0.0.1", "");
    var list = AdminGrpc.newBlockingStub(loopback.channel()).listConnections(ListConnectionsRequest.getDefaultInstance());
    assertThat(list.getConnectionsList()).singleElement().satisfies(c -> {
      assertThat(c.getClientId()).isEqualTo("provider");
      assertThat(c.getInstanceCount()).isEqualTo(1);
      assertThat(c.getRemoteAddress()).startsWith("127.0.0.1:");
    });
    HealthCheckResponse health = HealthGrpc.newBlockingStub(loopback.channel()).check(HealthCheckRequest.getDefaultInstance());
    assertThat(health.getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
  }
}
