package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.roster.proto.v1.AdminGrpc;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Drain;
import io.roster.proto.v1.DrainInstanceRequest;
import io.roster.proto.v1.DrainInstanceResponse;
import io.roster.proto.v1.DrainSummary;
import io.roster.proto.v1.ErrorCode;
import io.roster.proto.v1.Result;
import io.roster.server.model.ServiceKey;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Drain with confirmation, over real loopback sockets: the session frame and Admin/DrainInstance. */
class DrainTest {

  /** How long a drain that should end early may take at most, scaled by the time factor. */
  private static final Duration WAIT = TestTime.seconds(20);

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults();

  private TestSession session(String clientId) {
    return loopback.session(clientId);
  }

  private TestSession subscriber(String clientId, boolean acks) {
    TestSession s = session(clientId);
    s.autoAck(acks);
    assertThat(s.subscribe("pay").getOk()).isTrue();
    s.awaitPush("pay", i -> i.getInstancesCount() == 1);
    return s;
  }

  private CompletableFuture<Result> drainAsync(TestSession provider, long timeoutMs) {
    return CompletableFuture.supplyAsync(() ->
        provider.request(ClientFrame.newBuilder().setDrain(Drain.newBuilder().setTimeoutMs(timeoutMs))));
  }

  private int instances(String service) {
    return loopback.server().registry().snapshot(ServiceKey.of("", "", service)).instances().size();
  }

  @Test
  void drainRemovesPushesAndCountsAcksAndTheOneThatNeverAcks() throws Exception {
    TestSession provider = session("provider");
    assertThat(provider.register("pay", "10.0.0.1", 80).getOk()).isTrue();
    List<TestSession> acking = List.of(subscriber("a", true), subscriber("b", true), subscriber("c", true));
    subscriber("frozen", false);
    // The three acks must arrive within it: scaled. "Not before the timeout" is not scaled up.
    Duration timeout = TestTime.millis(1_000);
    long start = System.nanoTime();

    Result r = drainAsync(provider, timeout.toMillis()).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);

    Duration took = Duration.ofNanos(System.nanoTime() - start);
    assertThat(r.getOk()).isTrue();
    assertThat(r.getDrain()).isEqualTo(DrainSummary.newBuilder()
        .setNotified(4).setAcked(3).setTimedOut(1).build());
    assertThat(took).as("returns at the timeout, not at a re-send or later")
        .isBetween(timeout.minusMillis(100), timeout.plus(TestTime.seconds(4)));
    assertThat(instances("pay")).isZero();
    for (TestSession s : acking) {
      s.awaitPush("pay", i -> i.getInstancesCount() == 0);
    }
    // The session stays open and usable.
    assertThat(provider.register("other", "10.0.0.1", 81).getOk()).isTrue();
  }

  @Test
  void aSubscriberThatDisconnectsDoesNotHoldTheDrain() throws Exception {
    TestSession provider = session("provider");
    provider.register("pay", "10.0.0.1", 80);
    TestSession ok = subscriber("ok", true);
    TestSession dying = subscriber("dying", false);

    CompletableFuture<Result> drained = drainAsync(provider, 60_000);
    ok.awaitPush("pay", i -> i.getInstancesCount() == 0);
    dying.cancel();

    Result r = drained.get(WAIT.toMillis(), TimeUnit.MILLISECONDS); // far less than the 60 s timeout
    assertThat(r.getDrain()).isEqualTo(DrainSummary.newBuilder()
        .setNotified(2).setAcked(1).setDisconnected(1).build());
  }

  @Test
  void aDrainWithNoSubscribersAnswersAtOnceAndItsOwnSubscriptionDoesNotCount() throws Exception {
    TestSession provider = session("provider");
    provider.register("pay", "10.0.0.1", 80);
    provider.autoAck(false);
    provider.subscribe("pay");

    Result r = drainAsync(provider, 60_000).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);

    assertThat(r.getDrain()).isEqualTo(DrainSummary.getDefaultInstance());
    assertThat(instances("pay")).isZero();
  }

  @Test
  void aBadDrainTimeoutIsAnErrorAndNothingIsRemoved() throws Exception {
    TestSession provider = session("provider");
    provider.register("pay", "10.0.0.1", 80);

    Result r = drainAsync(provider, 600_000).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);

    assertThat(r.getCode()).isEqualTo(ErrorCode.ERROR_CODE_INVALID_ARGUMENT);
    assertThat(r.getField()).isEqualTo("drain.timeout_ms");
    assertThat(r.getMessage()).isEqualTo("drain.timeout_ms: 600000 (expected: 0..60000 ms (0 means 5000))");
    assertThat(instances("pay")).isEqualTo(1);
  }

  @Test
  void adminDrainInstanceDisablesItAndWaitsForTheSubscribers() {
    TestSession provider = session("provider");
    provider.register("pay", "10.0.0.1", 80);
    provider.register("pay", "10.0.0.2", 80);
    TestSession a = session("a");
    a.subscribe("pay");
    a.awaitPush("pay", i -> i.getInstancesCount() == 2);

    DrainInstanceResponse r = AdminGrpc.newBlockingStub(loopback.channel()).drainInstance(DrainInstanceRequest.newBuilder()
        .setService(TestSession.key("pay")).setIp("10.0.0.1").setPort(80).setTimeoutMs(TestTime.seconds(10).toMillis()).build());

    assertThat(r.getDrain()).isEqualTo(DrainSummary.newBuilder().setNotified(1).setAcked(1).build());
    a.awaitPush("pay", i -> i.getInstancesCount() == 1 && i.getInstances(0).getIp().equals("10.0.0.2"));
    assertThat(loopback.server().registry().snapshot(ServiceKey.of("", "", "pay")).instances())
        .as("still registered, but out of traffic").hasSize(1);
    assertThat(loopback.server().sessions().all().get(0).instanceCount()).isEqualTo(2);
  }

  @Test
  void adminDrainOfAnUnknownInstanceIsNotFoundAndABadTimeoutNamesTheField() {
    var admin = AdminGrpc.newBlockingStub(loopback.channel());
    assertThatThrownBy(() -> admin.drainInstance(DrainInstanceRequest.newBuilder()
        .setService(TestSession.key("pay")).setIp("10.9.9.9").setPort(1).build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
          assertThat(e.getStatus().getDescription()).contains("10.9.9.9").contains("pay");
        });
    assertThatThrownBy(() -> admin.drainInstance(DrainInstanceRequest.newBuilder()
        .setService(TestSession.key("pay")).setIp("10.9.9.9").setPort(1).setTimeoutMs(61_000).build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).startsWith("timeout_ms: 61000");
        });
  }
}
