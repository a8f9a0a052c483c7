package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.proto.v1.AdminGrpc;
import io.roster.proto.v1.BatchRegisterInstances;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Drain;
import io.roster.proto.v1.DrainInstanceRequest;
import io.roster.proto.v1.DrainSummary;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServiceInfo;
import io.roster.proto.v1.WatchRequest;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.naming.DrainTimeouts;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.StreamRecorder;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The drain rules of docs/protocol.md ("drain") and docs/operations.md that DrainTest leaves out. */
class DrainRulesTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults();

  private TestSession session(String clientId) {
    return loopback.session(clientId);
  }

  private CompletableFuture<Result> drainAsync(TestSession provider, long timeoutMs) {
    return CompletableFuture.supplyAsync(() ->
        provider.request(ClientFrame.newBuilder().setDrain(Drain.newBuilder().setTimeoutMs(timeoutMs))));
  }

  @Test
  void aTimeoutOfZeroMeansFiveSecondsAndAtMostAMinute() {
    assertThat(DrainTimeouts.timeout("drain.timeout_ms", 0)).isEqualTo(Duration.ofSeconds(5));
    assertThat(DrainTimeouts.timeout("drain.timeout_ms", 60_000)).isEqualTo(Duration.ofSeconds(60));
    Assertions.assertThatThrownBy(() -> DrainTimeouts.timeout("drain.timeout_ms", 60_001))
        .isInstanceOf(RegistryException.class).hasMessageStartingWith("drain.timeout_ms: 60001");
  }

  /** 0 is the default wait, not "do not wait": the answer waits for the subscriber. */
  @Test
  void aDrainWithTimeoutZeroWaitsForTheSubscribers() throws Exception {
    TestSession provider = session("provider");
    provider.register("pay", "10.0.0.1", 80);
    TestSession silent = session("silent");
    silent.autoAck(false);
    silent.subscribe("pay");
    silent.awaitPush("pay", i -> i.getInstancesCount() == 1);

    CompletableFuture<Result> drained = drainAsync(provider, 0);
    silent.awaitPush("pay", i -> i.getInstancesCount() == 0);
    await().during(TestTime.seconds(1)).atMost(TestTime.seconds(3)).until(() -> !drained.isDone());
    silent.cancel();

    assertThat(drained.get(TestTime.seconds(10).toMillis(), TimeUnit.MILLISECONDS).getDrain())
        .isEqualTo(DrainSummary.newBuilder().setNotified(1).setDisconnected(1).build());
  }

  @Test
  void countsArePerSubscriptionAcrossServicesAndWatchesAreNotCounted() throws Exception {
    TestSession provider = session("provider");
    provider.register("pay", "10.0.0.1", 80);
    provider.register("ship", "10.0.0.1", 81);
    TestSession both = session("both");
    both.subscribe("pay");
    both.subscribe("ship");
    both.awaitPush("ship", i -> i.getInstancesCount() == 1);
    StreamRecorder<ServiceInfo> watched = new StreamRecorder<>();
    RegistryGrpc.newStub(loopback.channel()).watch(WatchRequest.newBuilder().setService(TestSession.key("pay")).build(),
        watched);
    assertThat(watched.next().getInstancesCount()).isEqualTo(1);

    Result r = drainAsync(provider, 10_000).get(TestTime.seconds(20).toMillis(), TimeUnit.MILLISECONDS);

    assertThat(r.getDrain()).as("one session, two subscriptions; the watch is not counted")
        .isEqualTo(DrainSummary.newBuilder().setNotified(2).setAcked(2).build());
    assertThat(watched.next().getInstancesCount()).as("but it is told").isZero();
  }

  /** operations.md: an operator's disable lasts until the owner registers the instance again. */
  @Test
  void drainInstanceIsUndoneByTheOwnersRedo() {
    TestSession provider = session("provider");
    provider.register("pay", "10.0.0.1", 80);
    TestSession consumer = session("consumer");
    consumer.subscribe("pay");
    consumer.awaitPush("pay", i -> i.getInstancesCount() == 1);

    var drained = AdminGrpc.newBlockingStub(loopback.channel()).drainInstance(DrainInstanceRequest.newBuilder()
        .setService(TestSession.key("pay")).setIp("10.0.0.1").setPort(80).setTimeoutMs(10_000).build());
    assertThat(drained.getDrain()).isEqualTo(DrainSummary.newBuilder().setNotified(1).setAcked(1).build());
    consumer.awaitPush("pay", i -> i.getInstancesCount() == 0);

    // The owner's redo after a reconnect: its complete set, as it registered it.
    Result redo = provider.request(ClientFrame.newBuilder().setBatchRegister(BatchRegisterInstances.newBuilder()
        .setService(TestSession.key("pay")).addInstances(Instance.newBuilder().setIp("10.0.0.1").setPort(80))));
    assertThat(redo.getOk()).isTrue();

    consumer.awaitPush("pay", i -> i.getInstancesCount() == 1 && i.getInstances(0).getEnabled());
    assertThat(loopback.server().registry().snapshot(ServiceKey.of("", "", "pay")).instances()).hasSize(1);
  }
}
