package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.roster.proto.v1.BatchRegisterInstances;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegisterInstance;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceInfo;
import io.roster.proto.v1.Subscribe;
import io.roster.proto.v1.UpdateInstanceRequest;
import io.roster.proto.v1.UpdateServiceRequest;
import io.roster.proto.v1.WatchRequest;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.StreamRecorder;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What consumers see of a service (docs/protocol.md "Revisions and checksums", UpdateService,
 * Watch): the protect threshold, checksums per view, Watch's first message and latest-wins,
 * revisions across a restart.
 */
class ServiceViewTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults();

  private RegistryGrpc.RegistryBlockingStub registry;
  private TestSession provider;

  @BeforeEach
  void connect() {
    registry = RegistryGrpc.newBlockingStub(loopback.channel()).withDeadlineAfter(TestTime.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
    provider = loopback.session("provider");
  }

  private void register(String service, String ip, String cluster) {
    assertThat(provider.request(ClientFrame.newBuilder().setRegister(RegisterInstance.newBuilder()
        .setService(TestSession.key(service))
        .setInstance(Instance.newBuilder().setIp(ip).setPort(80).setCluster(cluster)))).getOk()).isTrue();
  }

  private void update(String service, String ip, UpdateInstanceRequest.Builder change) {
    registry.updateInstance(change.setService(TestSession.key(service)).setIp(ip).setPort(80).build());
  }

  private void threshold(String service, double value) {
    registry.updateService(UpdateServiceRequest.newBuilder().setService(TestSession.key(service))
        .setProtectThreshold(value).build());
  }

  private ServiceInfo query(String service, boolean healthyOnly, String... clusters) {
    return registry.queryInstances(QueryInstancesRequest.newBuilder().setService(TestSession.key(service))
        .setHealthyOnly(healthyOnly).addAllClusters(List.of(clusters)).build()).getServiceInfo();
  }

  /** 1 healthy of 3 enabled = 0.33 reaches 0.4; counting the disabled healthy one (2 of 4) would not. */
  @Test
  void theProtectThresholdCountsEnabledInstancesOnly() {
    for (int i = 1; i <= 4; i++) {
      register("guarded", "10.0.3." + i, "");
    }
    update("guarded", "10.0.3.2", UpdateInstanceRequest.newBuilder().setHealthy(false));
    update("guarded", "10.0.3.3", UpdateInstanceRequest.newBuilder().setHealthy(false));
    update("guarded", "10.0.3.4", UpdateInstanceRequest.newBuilder().setEnabled(false));

    threshold("guarded", 0.4);

    ServiceInfo healthyOnly = query("guarded", true);
    assertThat(healthyOnly.getProtectThresholdReached()).isTrue();
    assertThat(healthyOnly.getInstancesList()).extracting(Instance::getIp)
        .as("every enabled instance, never the disabled one").containsExactly("10.0.3.1", "10.0.3.2", "10.0.3.3");
  }

  @Test
  void withNoEnabledInstanceTheThresholdIsNotReached() {
    register("dark", "10.0.4.1", "");
    update("dark", "10.0.4.1", UpdateInstanceRequest.newBuilder().setEnabled(false));

    threshold("dark", 1);

    ServiceInfo info = query("dark", true);
    assertThat(info.getInstancesCount()).isZero();
    assertThat(info.getProtectThresholdReached()).isFalse();
  }

  @Test
  void theThresholdFlagIsPartOfTheChecksum() {
    register("flagged", "10.0.5.1", "");
    ServiceInfo before = query("flagged", false);

    threshold("flagged", 1); // 1 of 1 healthy <= 1: reached, same instances

    ServiceInfo after = query("flagged", false);
    assertThat(after.getProtectThresholdReached()).isTrue();
    assertThat(after.getInstancesList()).isEqualTo(before.getInstancesList());
    assertThat(after.getChecksum()).isNotEqualTo(before.getChecksum());
    assertThat(after.getRevision()).as("a threshold change is a new revision").isGreaterThan(before.getRevision());
  }

  @Test
  void eachViewHasItsOwnChecksumInQueriesAndPushes() {
    register("views", "10.0.6.1", "a");
    register("views", "10.0.6.2", "b");
    register("views", "10.0.6.3", "b");
    update("views", "10.0.6.2", UpdateInstanceRequest.newBuilder().setCluster("b").setHealthy(false));
    TestSession consumer = loopback.session("consumer");
    consumer.request(ClientFrame.newBuilder().setSubscribe(Subscribe.newBuilder()
        .setService(TestSession.key("views")).addClusters("a")));

    String all = query("views", false).getChecksum();
    String onlyA = query("views", false, "a").getChecksum();
    String healthy = query("views", true).getChecksum();

    assertThat(List.of(all, onlyA, healthy)).doesNotHaveDuplicates();
    assertThat(query("views", true, "a").getChecksum()).as("equal content, equal checksum").isEqualTo(onlyA);
    assertThat(consumer.awaitPush("views", i -> true).getChecksum()).as("the push's view").isEqualTo(onlyA);

    register("views", "10.0.6.4", "b"); // outside the filter: a new revision, the same view
    var poll = registry.queryInstances(QueryInstancesRequest.newBuilder().setService(TestSession.key("views"))
        .addClusters("a").setKnownChecksum(onlyA).build());
    assertThat(poll.getNotModified()).isTrue();
    assertThat(query("views", false).getChecksum()).isNotEqualTo(all);
  }

  @Test
  void watchStartsWithAnEmptyStateAtTheAbsentRevisionForAnUnknownService() throws Exception {
    StreamRecorder<ServiceInfo> seen = new StreamRecorder<>();
    var ctx = io.grpc.Context.current().withCancellation();
    ctx.run(() -> RegistryGrpc.newStub(loopback.channel()).watch(
        WatchRequest.newBuilder().setService(TestSession.key("nope")).build(), seen));
    try {
      ServiceInfo first = seen.next();
      assertThat(first).isNotNull();
      assertThat(first.getInstancesCount()).isZero();
      assertThat(first.getRevision()).isEqualTo(loopback.server().registry().absentRevision()).isPositive();
      assertThat(first.getService().getNamespace()).isEqualTo("public");
      assertThat(first.getService().getGroup()).isEqualTo("DEFAULT_GROUP");
      register("nope", "10.0.7.1", "");
      assertThat(seen.next().getInstancesCount()).isEqualTo(1);
    } finally {
      ctx.cancel(null);
    }
  }

  /**
   * A watcher that stops reading while 30 changes happen (each state is over a megabyte, so
   * HTTP/2 flow control holds the server back after one): it gets far fewer states than
   * changes, in increasing revisions, ending on the latest.
   */
  @Test
  void aSlowWatcherSkipsToTheLatestStateAndNeverGoesBackwards() throws Exception {
    BatchRegisterInstances.Builder big = BatchRegisterInstances.newBuilder().setService(TestSession.key("big"));
    String value = "v".repeat(1000);
    for (int i = 0; i < 80; i++) {
      Instance.Builder b = Instance.newBuilder().setIp("10.1." + (i / 250) + "." + (i % 250)).setPort(80);
      for (int m = 0; m < 15; m++) {
        b.putMetadata("k" + m, value);
      }
      big.addInstances(b);
    }
    assertThat(provider.request(ClientFrame.newBuilder().setBatchRegister(big)).getOk()).isTrue();
    List<ServiceInfo> received = new CopyOnWriteArrayList<>();
    CompletableFuture<ClientCallStreamObserver<WatchRequest>> call = new CompletableFuture<>();
    RegistryGrpc.newStub(loopback.channel()).watch(WatchRequest.newBuilder().setService(TestSession.key("big")).build(),
        new ClientResponseObserver<WatchRequest, ServiceInfo>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<WatchRequest> stream) {
            stream.disableAutoRequestWithInitial(1);
            call.complete(stream);
          }

          @Override
          public void onNext(ServiceInfo v) {
            received.add(v);
          }

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}
        });
    await().atMost(TestTime.seconds(10)).until(() -> received.size() == 1);

    int changes = 30;
    for (int w = 1; w <= changes; w++) {
      update("big", "10.1.0.0", UpdateInstanceRequest.newBuilder().setWeight(w));
    }
    long finalRevision = query("big", false).getRevision();
    call.get().request(1000);

    await().atMost(TestTime.seconds(10)).until(() ->
        received.get(received.size() - 1).getRevision() == finalRevision);
    assertThat(received.get(received.size() - 1).getInstances(0).getWeight()).isEqualTo(changes);
    assertThat(received.size() - 1).as("states after the first, for %d changes", changes).isLessThanOrEqualTo(3);
    List<Long> revisions = new ArrayList<>();
    received.forEach(i -> revisions.add(i.getRevision()));
    assertThat(revisions).isSorted().doesNotHaveDuplicates();
  }

  @Test
  void revisionsAfterARestartAreHigherThanBefore() {
    register("restarted", "10.0.8.1", "");
    long before = query("restarted", false).getRevision();

    loopback.restart();
    connect();
    assertThat(query("restarted", false).getRevision()).as("even the absent revision").isGreaterThan(before);
    register("restarted", "10.0.8.1", "");
    assertThat(query("restarted", false).getRevision()).isGreaterThan(before);
  }
}
