package io.roster.client.internal;

import static io.roster.client.internal.Fixtures.DEMO;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.client.Instance;
import io.roster.client.RosterException;
import io.roster.client.internal.FakeConnector.FakeStream;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ClientFrame.FrameCase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import io.roster.server.testing.TestTime;

/**
 * The connection state machine on a fake clock: rotation, back-off bounds, reset, connect
 * timeout, reconnect frames, keepalive and redo. No sleeps; time moves only when told.
 */
class ConnectionManagerTest {

  private final FakeClock clock = new FakeClock();
  private final FakeConnector connector = new FakeConnector().settlingOn(clock, () -> this.client.connection());
  private final ExecutorService callers = Executors.newCachedThreadPool();
  private DefaultRosterClient client;

  @AfterEach
  void tearDown() {
    callers.shutdownNow();
  }

  private void start(String servers, Random random) {
    client = new DefaultRosterClient(
        Fixtures.options(servers, Duration.ofSeconds(2), false, Runnable::run),
        ServerAddress.parseList(servers), connector, clock.scheduler(), false, clock, random);
    client.start();
    clock.runDue();
  }

  @Test
  void rotatesThroughTheServersWithJitteredExponentialBackoff() {
    start("a:1,b:2,c:3", new Random(11));
    List<String> tried = new ArrayList<>();
    List<Duration> waits = new ArrayList<>();
    for (int attempt = 0; attempt < 8; attempt++) {
      FakeStream s = connector.latest();
      tried.add(s.address.toString());
      s.next(FrameCase.HELLO);
      s.fail();
      List<Duration> pending = clock.pendingDelays();
      assertThat(pending).as("one reconnect timer").hasSize(1);
      waits.add(pending.get(0));
      clock.forward(pending.get(0));
    }
    assertThat(tried).containsExactly("a:1", "b:2", "c:3", "a:1", "b:2", "c:3", "a:1", "b:2");
    long[] ceilings = {100, 200, 400, 800, 1600, 3000, 3000, 3000};
    for (int i = 0; i < waits.size(); i++) {
      assertThat(waits.get(i)).as("wait before attempt %d", i + 1)
          .isBetween(Duration.ZERO, Duration.ofMillis(ceilings[i]));
    }
  }

  @Test
  void backoffSequenceAtTheTopOfTheJitterAndResetAfterWelcome() {
    start("a:1", maxRandom());
    List<Duration> waits = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      connector.latest().fail();
      Duration wait = clock.pendingDelays().get(0);
      waits.add(wait);
      clock.forward(wait);
    }
    assertThat(waits).extracting(Duration::toMillis)
        .containsExactly(100L, 200L, 400L, 800L, 1600L, 3000L, 3000L);

    connector.latest().welcome();
    assertThat(client.connection().activeSession()).isNotNull();
    connector.latest().fail();
    assertThat(clock.pendingDelays()).as("back-off starts over after a welcome")
        .containsExactly(Duration.ofMillis(100));
  }

  @Test
  void aServerThatWelcomesButRefusesTheRedoDoesNotStartTheBackoffOver() throws Exception {
    start("a:1", maxRandom());
    FakeStream first = connector.latest();
    first.welcome();
    CompletableFuture<Void> reg = CompletableFuture.runAsync(
        () -> client.registerInstance("demo", Instance.of("10.0.0.1", 8080)), callers);
    first.ok(first.next(FrameCase.REGISTER));
    reg.get(TestTime.seconds(5).toMillis(), TimeUnit.MILLISECONDS);

    first.fail();
    assertThat(clock.pendingDelays()).containsExactly(Duration.ofMillis(100));
    clock.forward(Duration.ofMillis(100));
    FakeStream refusing = connector.latest();
    refusing.welcome();
    refusing.error(refusing.next(FrameCase.BATCH_REGISTER), io.roster.proto.v1.ErrorCode.ERROR_CODE_UNAVAILABLE,
        "the cluster's log did not take this change", "");
    assertThat(refusing.halfClosed).as("nowhere else to go: it leaves and comes back").isTrue();
    assertThat(clock.pendingDelays()).as("the next step of the back-off, not its start")
        .contains(Duration.ofMillis(200)).doesNotContain(Duration.ofMillis(100));

    clock.forward(Duration.ofMillis(200));
    FakeStream taking = connector.latest();
    taking.welcome();
    taking.ok(taking.next(FrameCase.BATCH_REGISTER));
    taking.fail();
    assertThat(clock.pendingDelays()).as("starts over once a redo was taken")
        .contains(Duration.ofMillis(100)).doesNotContain(Duration.ofMillis(400));
  }

  @Test
  void noWelcomeWithinTheConnectTimeoutMovesOn() {
    start("a:1,b:2", new Random(1));
    FakeStream first = connector.latest();
    first.next(FrameCase.HELLO);
    clock.forward(Duration.ofSeconds(2));
    assertThat(first.cancelled).contains("no welcome");
    clock.forward(Duration.ofMillis(100));
    assertThat(connector.latest().address.toString()).isEqualTo("b:2");
  }

  @Test
  void reconnectFrameMovesPromptlyToTheSuggestedServer() {
    start("a:1,b:2", new Random(1));
    FakeStream first = connector.latest();
    first.welcome();
    first.reconnect("z:9");
    assertThat(first.halfClosed).as("no goodbye before the new session is ready").isFalse();
    assertThat(clock.pendingDelays()).as("the new session is opened at once").contains(Duration.ZERO);
    clock.runDue();
    assertThat(connector.latest().address.toString()).isEqualTo("z:9");

    FakeStream second = connector.latest();
    second.welcome(); // nothing to redo: ready at once
    assertThat(first.halfClosed).as("goodbye on the old session").isTrue();
    assertThat(client.connection().activeSession().address.toString()).isEqualTo("z:9");
    second.reconnect("");
    clock.runDue();
    assertThat(connector.latest().address.toString()).as("no suggestion: next of the list")
        .isEqualTo("b:2");
  }

  @Test
  void reconnectFrameFromTheOnlyServerWaitsABackoffStepInsteadOfReturningAtOnce() {
    start("a:1", new Random(1) {
      private static final long serialVersionUID = 1L;

      @Override
      public double nextDouble() {
        return 0.0; // the bottom of the jitter: still at least the initial step
      }
    });
    FakeStream first = connector.latest();
    first.welcome();
    first.reconnect("a:1"); // suggesting itself is no suggestion
    assertThat(first.halfClosed).isTrue();
    assertThat(clock.pendingDelays()).containsExactly(Duration.ofMillis(100));
    clock.runDue();
    assertThat(connector.streams).as("no attempt while the server drains").hasSize(1);
    clock.forward(Duration.ofMillis(100));
    assertThat(connector.streams).hasSize(2);
  }

  @Test
  void theTokenGoesInTheHelloAndARotatedOneReachesTheOpenSessionWithoutReconnecting() {
    java.util.concurrent.atomic.AtomicReference<String> token = new java.util.concurrent.atomic.AtomicReference<>("t1");
    ClientOptions o = Fixtures.options("a:1", Duration.ofSeconds(2), false, Runnable::run);
    client = new DefaultRosterClient(new ClientOptions(o.serverAddresses(), o.namespace(), o.clientId(), o.clientName(),
        o.labels(), o.requestTimeout(), o.connectTimeout(), o.pollInterval(), o.pollMaxBackoff(), o.pollEnabled(),
        o.reconnectInitial(), o.reconnectMax(), o.keepAliveTime(), o.keepAliveTimeout(), o.drainTimeout(),
        o.reconnectEmptyHold(), o.pushEmptyProtection(), o.failoverDir(), o.scheduler(), o.listenerExecutor(), o.tls(),
        token::get), ServerAddress.parseList("a:1"), connector, clock.scheduler(), false, clock, maxRandom());
    client.start();
    clock.runDue();
    FakeStream s = connector.latest();
    s.welcome(0, List.of(Session.FEATURE_CREDENTIALS));
    assertThat(s.hello.getHello().getToken()).isEqualTo("t1");

    token.set("t2");
    clock.forward(Duration.ofSeconds(5));
    ClientFrame renewal = s.next(FrameCase.CREDENTIALS);
    assertThat(renewal.getCredentials().getToken()).isEqualTo("t2");
    s.ok(renewal);
    s.next(FrameCase.PING);
    s.pong();
    clock.forward(Duration.ofSeconds(5));
    assertThat(s.next().getFrameCase()).as("renewed once: a ping next, no second credentials frame")
        .isEqualTo(FrameCase.PING);
    assertThat(connector.streams).as("no reconnect").hasSize(1);
  }

  @Test
  void keepAlivePingsAnIdleSessionAndDropsASilentOne() {
    start("a:1", maxRandom());
    FakeStream s = connector.latest();
    s.welcome();

    clock.forward(Duration.ofSeconds(5));
    s.next(FrameCase.PING);
    clock.forward(Duration.ofSeconds(1));
    s.pong();
    clock.forward(Duration.ofSeconds(3));
    assertThat(s.cancelled).as("answered ping keeps the session").isNull();
    assertThat(s.sent).isEmpty();

    clock.forward(Duration.ofSeconds(1)); // 5 s since the ping went out: ping again
    s.next(FrameCase.PING);
    clock.forward(Duration.ofSeconds(5));
    assertThat(client.connection().activeSession()).isNull();
    assertThat(s.cancelled).as("left open: a slow server would end it and remove its instances at once").isNull();
    clock.forward(Duration.ofMillis(100));
    assertThat(connector.streams).hasSize(2);
    assertThat(s.halfClosed).as("no goodbye before another session took the redo").isFalse();
    connector.latest().welcome(); // nothing to redo: taken at once
    assertThat(s.halfClosed).as("goodbye once the next session holds everything").isTrue();
  }

  /**
   * A silent server's session may own this client's instances: it is said goodbye only after a
   * later session's redo was taken, not after a redo the next server refused.
   */
  @Test
  void aSilentSessionKeepsItsInstancesUntilAnotherSessionTookTheRedo() throws Exception {
    start("a:1,b:2", maxRandom());
    FakeStream a = connector.latest();
    a.welcome();
    CompletableFuture<Void> reg = CompletableFuture.runAsync(
        () -> client.registerInstance("demo", Instance.of("10.0.0.1", 8080)), callers);
    a.ok(a.next(FrameCase.REGISTER));
    reg.get(TestTime.seconds(5).toMillis(), TimeUnit.MILLISECONDS);

    clock.forward(Duration.ofSeconds(5));
    a.next(FrameCase.PING);
    clock.forward(Duration.ofSeconds(5)); // no answer: a is given up
    clock.forward(Duration.ofMillis(100));
    FakeStream b = connector.latest();
    assertThat(b.address.toString()).isEqualTo("b:2");
    b.welcome();
    b.error(b.next(FrameCase.BATCH_REGISTER), io.roster.proto.v1.ErrorCode.ERROR_CODE_UNAVAILABLE,
        "this member has not heard from a leader", "");
    assertThat(a.halfClosed).as("b refused the redo: a may still hold the instance").isFalse();
    assertThat(a.cancelled).isNull();

    b.fail();
    clock.forward(Duration.ofSeconds(3));
    FakeStream next = connector.latest();
    next.welcome();
    next.ok(next.next(FrameCase.BATCH_REGISTER));
    assertThat(a.halfClosed).as("goodbye once a later session took the redo").isTrue();
  }

  @Test
  void pingsAsOftenAsTheServerAsksWhenThatIsSooner() {
    start("a:1", maxRandom());
    FakeStream s = connector.latest();
    s.welcome(2_000); // ours is 5 s; the server ends sessions silent for its time + timeout

    clock.forward(Duration.ofMillis(1_999));
    assertThat(s.sent).isEmpty();
    clock.forward(Duration.ofMillis(1));
    s.next(FrameCase.PING);
    s.pong();
    clock.forward(Duration.ofSeconds(2));
    s.next(FrameCase.PING);
  }

  @Test
  void redoRestoresRegistrationsAndSubscriptionsOnEveryNewSession() throws Exception {
    start("a:1,b:2", maxRandom());
    FakeStream first = connector.latest();
    first.welcome();

    Instance x = Instance.of("10.0.0.1", 8080);
    Instance y = Instance.of("10.0.0.2", 8080).withWeight(0);
    CompletableFuture<Void> reg = CompletableFuture.runAsync(() -> {
      client.registerInstance("demo", x);
      client.registerInstance("demo", y);
    }, callers);
    first.ok(first.next(FrameCase.REGISTER));
    first.ok(first.next(FrameCase.REGISTER));
    reg.get(TestTime.seconds(5).toMillis(), TimeUnit.MILLISECONDS);
    CompletableFuture<Void> sub =
        CompletableFuture.runAsync(() -> client.subscribe("other", e -> { }), callers);
    first.ok(first.next(FrameCase.SUBSCRIBE));
    sub.get(TestTime.seconds(5).toMillis(), TimeUnit.MILLISECONDS);

    first.fail();
    clock.forward(Duration.ofMillis(100));
    FakeStream second = connector.latest();
    assertThat(second.address.toString()).isEqualTo("b:2");
    second.welcome();

    ClientFrame batch = second.next(FrameCase.BATCH_REGISTER);
    assertThat(batch.getBatchRegister().getService().getName()).isEqualTo("demo");
    assertThat(batch.getBatchRegister().getService().getGroup()).isEqualTo("DEFAULT_GROUP");
    assertThat(batch.getBatchRegister().getService().getNamespace()).isEqualTo("public");
    assertThat(batch.getBatchRegister().getInstancesList())
        .extracting(i -> i.getIp() + ":" + i.getPort() + " w=" + i.getWeight())
        .containsExactly("10.0.0.1:8080 w=1.0", "10.0.0.2:8080 w=0.0");
    assertThat(batch.getBatchRegister().getInstances(1).hasWeight())
        .as("weight 0 is sent explicitly").isTrue();
    ClientFrame resub = second.next(FrameCase.SUBSCRIBE);
    assertThat(resub.getSubscribe().getService().getName()).isEqualTo("other");
    assertThat(second.sent).isEmpty();
    assertThat(client.desired(DEMO)).containsExactly(x, y);
  }

  @Test
  void helloCarriesTheStableClientIdOnEverySession() {
    start("a:1", maxRandom());
    ClientFrame hello1 = connector.latest().next(FrameCase.HELLO);
    connector.latest().fail();
    clock.forward(Duration.ofMillis(100));
    ClientFrame hello2 = connector.latest().next(FrameCase.HELLO);
    assertThat(hello1.getHello().getClientId()).isEqualTo("test-client")
        .isEqualTo(hello2.getHello().getClientId());
    assertThat(hello1.getHello().getNamespace()).isEqualTo("public");
    assertThat(hello1.getRequestId()).isNotEmpty();
  }

  private void startWithToken(String servers, java.util.function.Supplier<String> token, Random random) {
    ClientOptions o = Fixtures.options(servers, Duration.ofSeconds(2), false, Runnable::run);
    client = new DefaultRosterClient(new ClientOptions(o.serverAddresses(), o.namespace(), o.clientId(), o.clientName(),
        o.labels(), o.requestTimeout(), o.connectTimeout(), o.pollInterval(), o.pollMaxBackoff(), o.pollEnabled(),
        o.reconnectInitial(), o.reconnectMax(), o.keepAliveTime(), o.keepAliveTimeout(), o.drainTimeout(),
        o.reconnectEmptyHold(), o.pushEmptyProtection(), o.failoverDir(), o.scheduler(), o.listenerExecutor(), o.tls(),
        token), ServerAddress.parseList(servers), connector, clock.scheduler(), false, clock, random);
    client.start();
    clock.runDue();
  }

  @Test
  void aHelloRefusedForItsCredentialsFailsTheWaitingCallAndBacksOffUpTo30sUntilTheSuppliersNewTokenIsTaken()
      throws Exception {
    java.util.concurrent.atomic.AtomicReference<String> token = new java.util.concurrent.atomic.AtomicReference<>("old");
    startWithToken("a:1,b:2", token::get, new Random() {
      private static final long serialVersionUID = 1L;

      @Override
      public double nextDouble() {
        return 0.999_999_999_999; // the top of the jitter, to the nanosecond of a 30 s step
      }
    });
    CompletableFuture<Void> waiting = CompletableFuture.runAsync(
        () -> client.registerInstance("demo", Instance.of("10.0.0.1", 8080)), callers);
    List<String> tried = new ArrayList<>();
    List<Duration> waits = new ArrayList<>();
    for (int attempt = 0; attempt < 7; attempt++) {
      FakeStream s = connector.latest();
      tried.add(s.address.toString());
      ClientFrame hello = s.next(FrameCase.HELLO);
      assertThat(hello.getHello().getToken()).isEqualTo("old");
      s.error(hello, io.roster.proto.v1.ErrorCode.ERROR_CODE_UNAUTHENTICATED,
          "hello.token: refused: a token the auth file does not list", "hello.token");
      assertThat(s.cancelled).as("given up at once, not after the connect timeout").startsWith("hello refused");
      if (attempt == 0) {
        assertThatThrownBy(() -> waiting.get(TestTime.seconds(5).toMillis(), TimeUnit.MILLISECONDS))
            .hasCauseInstanceOf(RosterException.class).cause()
            .satisfies(e -> {
              RosterException re = (RosterException) e;
              assertThat(re.code()).isEqualTo(RosterException.Code.UNAUTHENTICATED);
              assertThat(re.field()).isEqualTo("hello.token");
              assertThat(re.getMessage()).startsWith("cannot register 10.0.0.1:8080 in public/DEFAULT_GROUP@@demo: "
                  + "Roster server a:1 refused this client's credentials: hello.token: refused: a token the auth file "
                  + "does not list").endsWith("the change is kept and applied once a server takes the client's credentials");
            });
      }
      // Meanwhile every call that needs the connection says so at once, with the code.
      assertThatThrownBy(() -> client.registerInstance("demo", Instance.of("10.0.0.1", 8080)))
          .isInstanceOfSatisfying(RosterException.class,
              e -> assertThat(e.code()).isEqualTo(RosterException.Code.UNAUTHENTICATED));
      List<Duration> pending = clock.pendingDelays();
      assertThat(pending).as("one reconnect timer").hasSize(1);
      waits.add(pending.get(0));
      if (attempt == 6) {
        token.set("new"); // rotated during the wait: the next hello carries it
      }
      clock.forward(pending.get(0));
    }
    assertThat(waits).extracting(Duration::toMillis)
        .containsExactly(1_000L, 2_000L, 4_000L, 8_000L, 16_000L, 30_000L, 30_000L);
    assertThat(tried).containsExactly("a:1", "b:2", "a:1", "b:2", "a:1", "b:2", "a:1");

    FakeStream taken = connector.latest();
    taken.welcome();
    assertThat(taken.hello.getHello().getToken()).as("the supplier's token of the moment").isEqualTo("new");
    ClientFrame redo = taken.next(FrameCase.BATCH_REGISTER);
    assertThat(redo.getBatchRegister().getInstancesList()).extracting(i -> i.getIp() + ":" + i.getPort())
        .as("the refused call's registration was kept").containsExactly("10.0.0.1:8080");
    taken.ok(redo);
    taken.fail();
    assertThat(clock.pendingDelays()).as("after a welcome, an outage gets the reconnect back-off again")
        .containsExactly(Duration.ofMillis(100));
  }

  @Test
  void theBottomOfTheAuthBackoffIsHalfItsStep() {
    startWithToken("a:1", () -> "old", new Random(1) {
      private static final long serialVersionUID = 1L;

      @Override
      public double nextDouble() {
        return 0.0;
      }
    });
    List<Long> waits = new ArrayList<>();
    for (int attempt = 0; attempt < 7; attempt++) {
      FakeStream s = connector.latest();
      s.error(s.next(FrameCase.HELLO), io.roster.proto.v1.ErrorCode.ERROR_CODE_UNAUTHENTICATED, "hello.token: missing",
          "hello.token");
      Duration wait = clock.pendingDelays().get(0);
      waits.add(wait.toMillis());
      clock.forward(wait);
    }
    assertThat(waits).containsExactly(500L, 1_000L, 2_000L, 4_000L, 8_000L, 15_000L, 15_000L);
  }

  @Test
  void aHelloRefusedForAnotherReasonEndsTheAttemptAtOnceWithTheReconnectBackoff() {
    start("a:1,b:2", maxRandom());
    FakeStream first = connector.latest();
    first.error(first.next(FrameCase.HELLO), io.roster.proto.v1.ErrorCode.ERROR_CODE_RESOURCE_EXHAUSTED,
        "sessions from 127.0.0.1: 100 open (the limit, --max-sessions-per-address)", "");
    assertThat(first.cancelled).startsWith("hello refused: RESOURCE_EXHAUSTED");
    assertThat(clock.pendingDelays()).containsExactly(Duration.ofMillis(100));
    clock.forward(Duration.ofMillis(100));
    assertThat(connector.latest().address.toString()).isEqualTo("b:2");
  }

  static Random maxRandom() {
    return new Random() {
      private static final long serialVersionUID = 1L;

      @Override
      public double nextDouble() {
        return 0.999_999_999_9;
      }
    };
  }
}
