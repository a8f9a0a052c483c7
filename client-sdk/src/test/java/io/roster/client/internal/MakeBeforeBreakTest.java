package io.roster.client.internal;

import static io.roster.client.internal.Fixtures.info;
import static io.roster.client.internal.Fixtures.proto;
import static org.assertj.core.api.Assertions.assertThat;

import io.roster.client.Instance;
import io.roster.client.internal.FakeConnector.FakeStream;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ClientFrame.FrameCase;
import io.roster.proto.v1.ErrorCode;
import io.roster.server.testing.TestTime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Make-before-break on a {@code reconnect} frame, on a fake clock: the old session stays the
 * active one until a session to the next server is welcomed and has every frame of its redo
 * answered; only then does the old one get its goodbye. No sleeps; time moves only when told.
 */
class MakeBeforeBreakTest {

  private static final ServiceKey OTHER = new ServiceKey("public", "DEFAULT_GROUP", "other");

  private final FakeClock clock = new FakeClock();
  private final FakeConnector connector = new FakeConnector().settlingOn(clock, () -> this.client.connection());
  private final ExecutorService callers = Executors.newCachedThreadPool();
  private DefaultRosterClient client;

  @AfterEach
  void tearDown() {
    callers.shutdownNow();
  }

  /** A client whose request and connect timeouts are 2 s, connected and welcomed by a:1. */
  private FakeStream start(String servers) {
    return start(servers, Duration.ZERO);
  }

  private FakeStream start(String servers, Duration reconnectEmptyHold) {
    client = new DefaultRosterClient(
        Fixtures.options(servers, Duration.ofSeconds(2), false, Runnable::run, reconnectEmptyHold),
        ServerAddress.parseList(servers), connector, clock.scheduler(), false, clock,
        ConnectionManagerTest.maxRandom());
    client.start();
    clock.runDue();
    FakeStream first = connector.latest();
    first.welcome();
    return first;
  }

  private String active() {
    Session s = client.connection().activeSession();
    return s == null ? null : s.address.toString();
  }

  private static void await(CompletableFuture<Void> f) throws Exception {
    f.get(TestTime.seconds(5).toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Registers {@code x} in demo and subscribes to other, answering on {@code s}. */
  private void registerAndSubscribe(FakeStream s, Instance x) throws Exception {
    CompletableFuture<Void> reg = CompletableFuture.runAsync(() -> client.registerInstance("demo", x), callers);
    s.ok(s.next(FrameCase.REGISTER));
    await(reg);
    CompletableFuture<Void> sub = CompletableFuture.runAsync(() -> client.subscribe("other", e -> { }), callers);
    s.ok(s.next(FrameCase.SUBSCRIBE));
    await(sub);
  }

  @Test
  void theOldSessionGetsItsGoodbyeOnlyOnceTheNewOneHasAnsweredItsRedo() throws Exception {
    FakeStream first = start("a:1,b:2");
    Instance x = Instance.of("10.0.0.1", 8080);
    registerAndSubscribe(first, x);

    first.reconnect("z:9");
    clock.runDue();
    FakeStream second = connector.latest();
    assertThat(second.address.toString()).as("the suggested server").isEqualTo("z:9");
    assertThat(client.connection().standbySession()).isNotNull();
    second.welcome();
    ClientFrame batch = second.next(FrameCase.BATCH_REGISTER);
    assertThat(batch.getBatchRegister().getInstancesList()).extracting(i -> i.getIp()).containsExactly("10.0.0.1");
    ClientFrame resub = second.next(FrameCase.SUBSCRIBE);
    assertThat(resub.getSubscribe().getService().getName()).isEqualTo("other");

    assertThat(first.halfClosed).as("no goodbye while the redo is unanswered").isFalse();
    assertThat(active()).as("the old session still serves requests").isEqualTo("a:1");

    // Pushes on both sessions meanwhile: each is acked where it came from.
    first.push("p-old", info(OTHER, 5, "c5", proto("10.9.0.1", 80)));
    assertThat(first.next(FrameCase.PUSH_ACK).getPushAck().getPushId()).isEqualTo("p-old");
    second.push("p-new", info(OTHER, 6, "c6", proto("10.9.0.1", 80), proto("10.9.0.2", 80)));
    assertThat(second.next(FrameCase.PUSH_ACK).getPushAck().getPushId()).isEqualTo("p-new");
    assertThat(client.cached(OTHER)).extracting(Instance::ip).containsExactly("10.9.0.1", "10.9.0.2");

    // A change meanwhile goes to the active session, and to the new one (its redo predates it).
    Instance y = Instance.of("10.0.0.2", 8080);
    CompletableFuture<Void> reg = CompletableFuture.runAsync(() -> client.registerInstance("demo", y), callers);
    first.ok(first.next(FrameCase.REGISTER));
    await(reg);
    ClientFrame mirrored = second.next(FrameCase.REGISTER);
    assertThat(mirrored.getRegister().getInstance().getIp()).isEqualTo("10.0.0.2");

    second.ok(batch);
    second.error(resub, ErrorCode.ERROR_CODE_INVALID_ARGUMENT, "no", "service"); // an error is an answer too
    assertThat(first.halfClosed).as("the change sent meanwhile is not answered yet").isFalse();
    second.ok(mirrored);

    // The new session is current now; once the old one has answered everything it sent, the new
    // one registers everything again (the old one's last changes may have landed after the redo).
    assertThat(active()).isEqualTo("z:9");
    ClientFrame reclaim = second.next(FrameCase.BATCH_REGISTER);
    assertThat(reclaim.getBatchRegister().getInstancesList()).extracting(i -> i.getIp())
        .containsExactlyInAnyOrder("10.0.0.1", "10.0.0.2");
    assertThat(first.halfClosed).as("no goodbye before the new session holds everything again").isFalse();
    second.ok(reclaim);

    assertThat(first.halfClosed).as("goodbye once everything is answered").isTrue();
    assertThat(first.cancelled).isNull();
    assertThat(active()).isEqualTo("z:9");
    assertThat(client.connection().standbySession()).isNull();

    Instance w = Instance.of("10.0.0.3", 8080);
    CompletableFuture<Void> later = CompletableFuture.runAsync(() -> client.registerInstance("demo", w), callers);
    second.ok(second.next(FrameCase.REGISTER));
    await(later);
    assertThat(first.sent).as("nothing more on the old session").isEmpty();
    first.complete(); // the server's end of the goodbye changes nothing
    assertThat(active()).isEqualTo("z:9");
    assertThat(connector.streams).hasSize(2);
  }

  @Test
  void aChangeAnsweredUnavailableIsKeptAndMovesTheClientToAServerThatTakesIt() throws Exception {
    FakeStream first = start("a:1,b:2");
    Instance x = Instance.of("10.0.0.1", 8080);
    CompletableFuture<Void> reg = CompletableFuture.runAsync(() -> client.registerInstance("demo", x), callers);
    // A cluster member cut off from the majority: it cannot take writes.
    first.error(first.next(FrameCase.REGISTER), ErrorCode.ERROR_CODE_UNAVAILABLE, "this member is cut off", "");
    // The caller's thread reacts to the answer: it asks the client to move.
    org.awaitility.Awaitility.await().atMost(TestTime.seconds(5)).until(() -> {
      clock.runDue();
      return connector.latest() != first;
    });
    FakeStream second = connector.latest();
    assertThat(second.address.toString()).isEqualTo("b:2");
    second.welcome();
    ClientFrame redo = second.next(FrameCase.BATCH_REGISTER);
    assertThat(redo.getBatchRegister().getInstancesList()).extracting(i -> i.getIp())
        .as("the refused change was kept and is redone there").containsExactly("10.0.0.1");
    second.ok(redo);
    assertThat(active()).isEqualTo("b:2");
    // The caller's register goes through on the new server (again: registering is idempotent);
    // the new session registers everything once more before the old one gets its goodbye.
    java.util.List<ClientFrame> next = java.util.List.of(second.next(), second.next());
    next.forEach(second::ok);
    assertThat(next).extracting(ClientFrame::getFrameCase)
        .containsExactlyInAnyOrder(FrameCase.REGISTER, FrameCase.BATCH_REGISTER);
    assertThat(first.halfClosed).isTrue();
    await(reg);
  }

  @Test
  void aNewServerThatCannotTakeTheRedoIsNotMovedTo() throws Exception {
    FakeStream first = start("a:1,b:2,c:3");
    registerAndSubscribe(first, Instance.of("10.0.0.1", 8080));
    first.reconnect("b:2");
    clock.runDue();
    FakeStream second = connector.latest();
    second.welcome();
    second.error(second.next(FrameCase.BATCH_REGISTER), ErrorCode.ERROR_CODE_UNAVAILABLE, "catching up", "");
    clock.runDue();
    FakeStream third = connector.latest();
    assertThat(third.address.toString()).as("the next candidate").isEqualTo("c:3");
    assertThat(first.halfClosed).as("the old session stays meanwhile").isFalse();
    assertThat(second.cancelled).as("its redo went out: it may own instances there").isNull();
    assertThat(second.halfClosed).isFalse();

    third.welcome();
    third.ok(third.next(FrameCase.BATCH_REGISTER));
    third.ok(third.next(FrameCase.SUBSCRIBE));
    assertThat(active()).isEqualTo("c:3");
    ClientFrame reclaim = third.next(FrameCase.BATCH_REGISTER);
    assertThat(second.halfClosed).as("no goodbye before the new session holds everything again").isFalse();
    third.ok(reclaim);
    assertThat(first.halfClosed).isTrue();
    assertThat(second.halfClosed).as("given up with a goodbye once c:3 holds everything").isTrue();
    assertThat(second.cancelled).isNull();
  }

  @Test
  void aNewSessionWhoseWholeRedoWasRefusedOwnsNothingAndIsCancelledAtOnce() throws Exception {
    FakeStream first = start("a:1,b:2,c:3");
    CompletableFuture<Void> reg = CompletableFuture.runAsync(
        () -> client.registerInstance("demo", Instance.of("10.0.0.1", 8080)), callers);
    first.ok(first.next(FrameCase.REGISTER));
    await(reg);
    first.reconnect("b:2");
    clock.runDue();
    FakeStream second = connector.latest();
    second.welcome();
    second.error(second.next(FrameCase.BATCH_REGISTER), ErrorCode.ERROR_CODE_UNAVAILABLE, "no leader", "");
    assertThat(second.cancelled).as("nothing of its redo was taken: nothing to keep it open for").isNotNull();
    clock.runDue();
    assertThat(connector.latest().address.toString()).isEqualTo("c:3");
  }

  @Test
  void aNewServerThatAsksToMoveAfterTheRedoKeepsItsSessionUntilTheNextOneHoldsEverything() throws Exception {
    FakeStream first = start("a:1,b:2,c:3");
    registerAndSubscribe(first, Instance.of("10.0.0.1", 8080));
    first.reconnect("b:2");
    clock.runDue();
    FakeStream second = connector.latest();
    second.welcome();
    second.ok(second.next(FrameCase.BATCH_REGISTER)); // b:2 now owns the instance
    second.reconnect("c:3"); // and stops too, before the subscribe is answered
    clock.runDue();
    assertThat(second.cancelled).as("ending it now would remove the instance it owns").isNull();
    FakeStream third = connector.latest();
    assertThat(third.address.toString()).isEqualTo("c:3");

    third.welcome();
    third.ok(third.next(FrameCase.BATCH_REGISTER));
    third.ok(third.next(FrameCase.SUBSCRIBE));
    third.ok(third.next(FrameCase.BATCH_REGISTER)); // the reclaim
    assertThat(active()).isEqualTo("c:3");
    assertThat(first.halfClosed).isTrue();
    assertThat(second.halfClosed).isTrue();
    assertThat(second.cancelled).isNull();
  }

  @Test
  void withoutASuggestionTheNextServerOfTheListIsTheTarget() {
    FakeStream first = start("a:1,b:2");
    first.reconnect("");
    assertThat(first.halfClosed).isFalse();
    clock.runDue();
    FakeStream second = connector.latest();
    assertThat(second.address.toString()).isEqualTo("b:2");
    second.welcome();
    assertThat(first.halfClosed).as("nothing to redo: moved at once").isTrue();
    assertThat(active()).isEqualTo("b:2");
  }

  @Test
  void aFailingNewSessionKeepsTheOldOneTriesTheNextCandidateAndFinallyTriesTheMoveAgain() throws Exception {
    FakeStream first = start("a:1,b:2,c:3");
    registerAndSubscribe(first, Instance.of("10.0.0.1", 8080));

    first.reconnect("z:9");
    clock.runDue();
    FakeStream refused = connector.latest();
    assertThat(refused.address.toString()).isEqualTo("z:9");
    refused.next(FrameCase.HELLO);
    refused.fail(); // refused: UNAVAILABLE
    assertThat(first.halfClosed).isFalse();
    assertThat(active()).isEqualTo("a:1");

    clock.runDue();
    FakeStream broken = connector.latest();
    assertThat(broken.address.toString()).as("the next candidate: the list, without the leaving one")
        .isEqualTo("b:2");
    broken.welcome();
    broken.next(FrameCase.BATCH_REGISTER);
    broken.fail(); // ends before answering its redo
    assertThat(first.halfClosed).isFalse();
    assertThat(active()).isEqualTo("a:1");

    clock.runDue();
    FakeStream silent = connector.latest();
    assertThat(silent.address.toString()).isEqualTo("c:3");
    silent.next(FrameCase.HELLO);
    clock.forward(Duration.ofSeconds(2)); // no welcome within the connect timeout
    assertThat(silent.cancelled).contains("no welcome");

    // Every candidate tried once: leaving now would remove the client's instances with nowhere
    // to take them, so it stays on a:1 and tries the move again after a back-off step.
    assertThat(first.halfClosed).isFalse();
    assertThat(active()).isEqualTo("a:1");
    assertThat(client.connection().standbySession()).isNull();
    assertThat(connector.streams).hasSize(4);
    clock.forward(Duration.ofMillis(99));
    assertThat(connector.streams).as("at least the initial back-off first").hasSize(4);
    clock.forward(Duration.ofMillis(1));
    assertThat(connector.streams).hasSize(5);
    FakeStream again = connector.latest();
    assertThat(again.address.toString()).isEqualTo("b:2");
    again.welcome();
    again.ok(again.next(FrameCase.BATCH_REGISTER));
    again.ok(again.next(FrameCase.SUBSCRIBE));
    again.ok(again.next(FrameCase.BATCH_REGISTER)); // the reclaim
    assertThat(active()).isEqualTo("b:2");
    assertThat(first.halfClosed).isTrue();
  }

  @Test
  void aNewSessionWhoseRedoIsNotAnsweredInTimeIsGivenUp() throws Exception {
    FakeStream first = start("a:1,b:2");
    registerAndSubscribe(first, Instance.of("10.0.0.1", 8080));

    first.reconnect("b:2");
    clock.runDue();
    FakeStream slow = connector.latest();
    slow.welcome();
    slow.next(FrameCase.BATCH_REGISTER);
    clock.forward(Duration.ofMillis(1_999));
    assertThat(slow.cancelled).isNull();
    clock.forward(Duration.ofMillis(1));
    assertThat(first.halfClosed).as("no candidate left: it stays, and tries again after back-off").isFalse();
    assertThat(active()).isEqualTo("a:1");
    assertThat(slow.cancelled).as("its redo may still land: it stays until another session holds everything")
        .isNull();

    clock.forward(Duration.ofSeconds(1));
    FakeStream next = connector.latest();
    assertThat(next).isNotSameAs(slow);
    next.welcome();
    next.ok(next.next(FrameCase.BATCH_REGISTER));
    next.ok(next.next(FrameCase.SUBSCRIBE));
    ClientFrame reclaim = next.next(FrameCase.BATCH_REGISTER);
    assertThat(slow.halfClosed).isFalse();
    next.ok(reclaim);
    assertThat(active()).isEqualTo(next.address.toString());
    assertThat(first.halfClosed).isTrue();
    assertThat(slow.halfClosed).as("goodbye once another session holds everything").isTrue();
  }

  /**
   * A move the server asked for, made before the old session let go, is not a reconnect: the
   * new member's state that empties a service is shown at once, not held for the reconnect
   * empty hold (W10 saw each deregistration reach moved subscribers 100 ms late, decision 51).
   */
  @Test
  void aStateThatEmptiesAServiceIsShownAtOnceAfterAMoveMadeBeforeTheBreak() throws Exception {
    FakeStream first = start("a:1,b:2", Duration.ofSeconds(4));
    subscribeOther(first);
    first.push("p1", info(OTHER, 5, "c5", proto("10.9.0.1", 80)));
    assertThat(client.cached(OTHER)).hasSize(1);

    first.reconnect("b:2");
    clock.runDue();
    FakeStream second = connector.latest();
    second.welcome();
    second.ok(second.next(FrameCase.SUBSCRIBE));
    assertThat(first.halfClosed).as("moved: the old session got its goodbye").isTrue();

    second.push("p2", info(OTHER, 6, "c6"));
    assertThat(client.cached(OTHER)).as("the last instance is gone, at once").isEmpty();
    assertThat(second.next(FrameCase.PUSH_ACK).getPushAck().getPushId()).isEqualTo("p2");
  }

  /** The contrast: after the old session died, the same state is held for the reconnect empty hold. */
  @Test
  void aStateThatEmptiesAServiceIsHeldAfterAReconnect() throws Exception {
    FakeStream first = start("a:1,b:2", Duration.ofSeconds(4));
    subscribeOther(first);
    first.push("p1", info(OTHER, 5, "c5", proto("10.9.0.1", 80)));

    first.fail();
    clock.forward(Duration.ofSeconds(3)); // past any reconnect back-off
    FakeStream second = connector.latest();
    assertThat(second).isNotSameAs(first);
    second.welcome();
    second.ok(second.next(FrameCase.SUBSCRIBE));

    second.push("p2", info(OTHER, 6, "c6"));
    assertThat(client.cached(OTHER)).as("held: its providers may still be reconnecting").hasSize(1);
    clock.forward(Duration.ofSeconds(4));
    assertThat(client.cached(OTHER)).as("the hold is over").isEmpty();
  }

  private void subscribeOther(FakeStream s) throws Exception {
    CompletableFuture<Void> sub = CompletableFuture.runAsync(() -> client.subscribe("other", e -> { }), callers);
    s.ok(s.next(FrameCase.SUBSCRIBE));
    await(sub);
  }

  @Test
  void whenTheOldSessionEndsMidMoveTheNewOneTakesOverAlone() throws Exception {
    FakeStream first = start("a:1,b:2");
    registerAndSubscribe(first, Instance.of("10.0.0.1", 8080));

    first.reconnect("b:2");
    clock.runDue();
    FakeStream second = connector.latest();
    second.welcome();
    ClientFrame batch = second.next(FrameCase.BATCH_REGISTER);
    first.complete(); // the old server stopped before the redo was answered

    assertThat(active()).as("the redo is out: active at once, as after any welcome").isEqualTo("b:2");
    second.ok(batch);
    clock.forward(Duration.ofSeconds(3));
    assertThat(connector.streams).as("no other session opened").hasSize(2);
    assertThat(second.cancelled).isNull();
    assertThat(second.halfClosed).isFalse();
  }

  @Test
  void whenTheOldSessionEndsBeforeTheNewOneIsWelcomedTheWelcomeMakesItCurrent() {
    FakeStream first = start("a:1,b:2");
    first.reconnect("b:2");
    clock.runDue();
    FakeStream second = connector.latest();
    first.fail();
    assertThat(active()).isNull();
    second.welcome();
    assertThat(active()).isEqualTo("b:2");
    clock.forward(Duration.ofSeconds(3));
    assertThat(connector.streams).hasSize(2);
  }

  @Test
  void closingDuringAMoveEndsBothSessions() throws Exception {
    FakeStream first = start("a:1,b:2");
    first.reconnect("b:2");
    clock.runDue();
    FakeStream second = connector.latest();
    CompletableFuture<Void> closing = CompletableFuture.runAsync(client::close, callers);
    Awaitility.await().atMost(TestTime.seconds(5)).until(() -> first.halfClosed);
    first.complete(); // the server's answer to the goodbye
    await(closing);
    assertThat(second.cancelled).isEqualTo("client closed");
  }
}
