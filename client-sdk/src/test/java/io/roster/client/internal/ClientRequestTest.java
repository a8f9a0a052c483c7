package io.roster.client.internal;

import static io.roster.client.internal.Fixtures.DEMO;
import static io.roster.client.internal.Fixtures.info;
import static io.roster.client.internal.Fixtures.proto;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.client.ClientClosedException;
import io.roster.client.Instance;
import io.roster.client.InstancesChangeEvent;
import io.roster.client.RosterException;
import io.roster.client.RosterException.Code;
import io.roster.client.internal.FakeConnector.FakeStream;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ClientFrame.FrameCase;
import io.roster.proto.v1.ErrorCode;
import io.roster.proto.v1.PushAck;
import io.roster.proto.v1.QueryInstancesResponse;
import io.roster.proto.v1.Result;
import io.roster.client.TestServers;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import io.roster.server.testing.TestTime;

/**
 * Requests, results, pushes and close against a fake server. The client's timers (request
 * timeouts, reconnects, listener hand-off) run on a fake clock. Its blocking calls also wait on
 * real time (for a connection, and as a backstop for an answer) up to the request timeout;
 * that is set to {@link #LONG} here, far beyond any test, so a call that ends did so because of
 * what the test did (a frame, a fake-clock timer, a close) and never because real time ran out.
 * The one test about that real-time wait builds its own client with a short timeout.
 */
class ClientRequestTest {

  /** The request timeout of the shared client: never reached in real time by a passing test. */
  private static final Duration LONG = Duration.ofMinutes(5);

  private final FakeClock clock = new FakeClock();
  private final FakeConnector connector = new FakeConnector();
  private final ExecutorService callers = Executors.newCachedThreadPool();
  private final List<InstancesChangeEvent> events = new CopyOnWriteArrayList<>();
  private DefaultRosterClient client;

  @BeforeEach
  void setUp() {
    client = start(connector, clock, LONG);
  }

  private static DefaultRosterClient start(FakeConnector connector, FakeClock clock, Duration requestTimeout) {
    DefaultRosterClient c = new DefaultRosterClient(
        Fixtures.options("a:1", requestTimeout, false, Runnable::run),
        ServerAddress.parseList("a:1"), connector, clock.scheduler(), false, clock,
        new Random(5));
    connector.settlingOn(clock, c::connection);
    c.start();
    clock.runDue();
    return c;
  }

  @AfterEach
  void tearDown() {
    callers.shutdownNow();
  }

  private CompletableFuture<Void> async(Runnable call) {
    return CompletableFuture.runAsync(call, callers);
  }

  /** Waits for a call, up to the (scaled) patience. */
  private static <T> T done(CompletableFuture<T> f) throws Exception {
    return f.get(TestServers.patience().toMillis(), TimeUnit.MILLISECONDS);
  }

  private static Throwable failure(CompletableFuture<?> f) throws Exception {
    try {
      done(f);
    } catch (ExecutionException e) {
      return e.getCause();
    }
    throw new AssertionError("expected a failure");
  }

  @Test
  void registerSendsTheInstanceAndReturnsOnOk() throws Exception {
    FakeStream s = connector.latest();
    s.welcome();
    Instance x = Instance.builder().ip("10.0.0.7").port(8080).weight(2).cluster("blue")
        .metadata(Map.of("zone", "a")).build();
    CompletableFuture<Void> call = async(() -> client.registerInstance("demo", "g1", x));
    ClientFrame frame = s.next(FrameCase.REGISTER);
    assertThat(frame.getRegister().getService().getGroup()).isEqualTo("g1");
    assertThat(frame.getRegister().getService().getName()).isEqualTo("demo");
    io.roster.proto.v1.Instance sent = frame.getRegister().getInstance();
    assertThat(sent.getIp()).isEqualTo("10.0.0.7");
    assertThat(sent.getPort()).isEqualTo(8080);
    assertThat(sent.getWeight()).isEqualTo(2.0);
    assertThat(sent.getCluster()).isEqualTo("blue");
    assertThat(sent.getMetadataMap()).containsEntry("zone", "a");
    assertThat(call).isNotDone();
    s.ok(frame);
    done(call);
  }

  @Test
  void aRejectedRegistrationIsThrownVerbatimAndForgotten() throws Exception {
    FakeStream s = connector.latest();
    s.welcome();
    CompletableFuture<Void> call = async(() -> client.registerInstance("demo", "10.0.0.7", 80));
    s.error(s.next(FrameCase.REGISTER), ErrorCode.ERROR_CODE_RESOURCE_EXHAUSTED,
        "instances: 5001 (expected: at most 5000 per connection)", "instances");

    assertThat(failure(call)).isInstanceOfSatisfying(RosterException.class, e -> {
      assertThat(e.code()).isEqualTo(Code.RESOURCE_EXHAUSTED);
      assertThat(e.field()).isEqualTo("instances");
    }).hasMessage("instances: 5001 (expected: at most 5000 per connection)");
    assertThat(client.desired(DEMO)).isEmpty();

    s.fail();
    clock.forward(Duration.ofMillis(100));
    connector.latest().welcome();
    assertThat(connector.latest().sent).as("nothing to redo").isEmpty();
  }

  @Test
  void aRejectedReplacementRestoresThePreviousInstance() throws Exception {
    FakeStream s = connector.latest();
    s.welcome();
    Instance v1 = Instance.of("10.0.0.7", 80);
    CompletableFuture<Void> first = async(() -> client.registerInstance("demo", v1));
    s.ok(s.next(FrameCase.REGISTER));
    done(first);

    Instance v2 = v1.withMetadata(Map.of("big", "x"));
    CompletableFuture<Void> second = async(() -> client.registerInstance("demo", v2));
    s.error(s.next(FrameCase.REGISTER), ErrorCode.ERROR_CODE_INVALID_ARGUMENT,
        "instance.metadata: ...", "instance.metadata");
    assertThat(failure(second)).isInstanceOf(RosterException.class);
    assertThat(client.desired(DEMO)).containsExactly(v1);
  }

  /**
   * No welcome comes: the call waits (real time) for a connection up to its request timeout,
   * then throws UNAVAILABLE and keeps the instance, which the first session then registers.
   */
  @Test
  void registerWhileDisconnectedKeepsTheInstanceAndThrowsUnavailable() throws Exception {
    FakeConnector quickConnector = new FakeConnector();
    FakeClock quickClock = new FakeClock();
    DefaultRosterClient quick = start(quickConnector, quickClock, Duration.ofMillis(200));
    Instance x = Instance.of("10.0.0.7", 80);
    CompletableFuture<Void> call = async(() -> quick.registerInstance("demo", x));
    assertThat(failure(call)).isInstanceOfSatisfying(RosterException.class,
            e -> assertThat(e.code()).isEqualTo(Code.UNAVAILABLE))
        .hasMessageContaining("not connected")
        .hasMessageContaining("kept");
    assertThat(quick.desired(DEMO)).containsExactly(x);

    quickConnector.latest().welcome();
    ClientFrame batch = quickConnector.latest().next(FrameCase.BATCH_REGISTER);
    assertThat(batch.getBatchRegister().getInstancesList()).extracting(i -> i.getIp())
        .containsExactly("10.0.0.7");
  }

  /**
   * The server never answers: the session's request timer, on the fake clock, ends the call
   * with TIMEOUT once the request timeout has passed there (the real-time backstop is minutes
   * away, so only that timer can end it), and the instance is kept.
   */
  @Test
  void noAnswerInTimeIsATimeoutAndTheInstanceIsKept() throws Exception {
    connector.latest().welcome();
    Instance x = Instance.of("10.0.0.7", 80);
    CompletableFuture<Void> call = async(() -> client.registerInstance("demo", x));
    connector.latest().next(FrameCase.REGISTER);
    // The timer gets what is left of the timeout after the (real) time the call took to send,
    // so it is due a little before LONG: well after LONG - patience, not after LONG.
    clock.forward(LONG.minus(TestServers.patience()));
    assertThat(call).as("still waiting well before the timeout").isNotDone();
    clock.forward(TestServers.patience());
    assertThat(failure(call)).isInstanceOfSatisfying(RosterException.class,
        e -> assertThat(e.code()).isEqualTo(Code.TIMEOUT));
    assertThat(client.desired(DEMO)).containsExactly(x);
  }

  @Test
  void aRequestCutOffByASessionLossCompletesOnTheNextSession() throws Exception {
    FakeStream first = connector.latest();
    first.welcome();
    CompletableFuture<Void> call = async(() -> client.registerInstance("demo", "10.0.0.7", 80));
    first.next(FrameCase.REGISTER);
    first.fail();
    clock.forward(Duration.ofMillis(100));
    FakeStream second = connector.latest();
    second.welcome();
    second.ok(second.next(FrameCase.BATCH_REGISTER));
    second.ok(second.next(FrameCase.REGISTER));
    done(call);
  }

  @Test
  void deregisterTreatsNotFoundAsDoneAndReturnsAtOnceWhenDisconnected() throws Exception {
    FakeStream s = connector.latest();
    s.welcome();
    CompletableFuture<Void> call = async(() -> client.deregisterInstance("demo", "10.0.0.7", 80));
    ClientFrame frame = s.next(FrameCase.DEREGISTER);
    assertThat(frame.getDeregister().getInstance().getCluster()).isEqualTo("DEFAULT");
    s.error(frame, ErrorCode.ERROR_CODE_NOT_FOUND, "not registered", "instance");
    done(call);

    s.fail();
    client.deregisterInstance("demo", "10.0.0.8", 80); // no session: returns at once
  }

  @Test
  void batchRegisterReplacesTheDesiredSet() throws Exception {
    FakeStream s = connector.latest();
    s.welcome();
    Instance a = Instance.of("10.0.0.1", 80);
    Instance b = Instance.of("10.0.0.2", 80);
    CompletableFuture<Void> call = async(() -> client.batchRegisterInstance("demo", List.of(a, b)));
    ClientFrame frame = s.next(FrameCase.BATCH_REGISTER);
    assertThat(frame.getBatchRegister().getInstancesCount()).isEqualTo(2);
    s.ok(frame);
    done(call);
    assertThat(client.desired(DEMO)).containsExactly(a, b);
  }

  @Test
  void localValidationFailsFastWithoutTalkingToTheServer() {
    assertThatThrownBy(() -> client.registerInstance("", "10.0.0.1", 80))
        .isInstanceOfSatisfying(RosterException.class,
            e -> assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT))
        .hasMessage("serviceName: '' (expected: a non-empty name)");
    assertThatThrownBy(() -> client.registerInstance("demo", "10.0.0.1", 0))
        .hasMessage("port: 0 (expected: 1..65535)");
    assertThatThrownBy(() -> client.registerInstance("demo",
        Instance.of("10.0.0.1", 80).withEphemeral(false)))
        .hasMessageStartingWith("instance.ephemeral: false (expected: true");
    assertThatThrownBy(() -> client.getServicesOfServer(0, 10))
        .hasMessage("pageNo: 0 (expected: >= 1)");
    assertThatThrownBy(() -> client.getServicesOfServer(1, 1001))
        .hasMessage("pageSize: 1001 (expected: 1..1000)");
  }

  @Test
  void pushesAreAppliedForwardOnlyAndEveryPushIsAcked() throws Exception {
    FakeStream s = connector.latest();
    s.welcome();
    CompletableFuture<Void> call = async(() -> client.subscribe("demo", events::add));
    s.ok(s.next(FrameCase.SUBSCRIBE));
    done(call);

    s.push("p1", info(DEMO, 10, "c10", proto("10.0.0.1", 80)));
    assertThat(s.next(FrameCase.PUSH_ACK).getPushAck().getPushId()).isEqualTo("p1");
    s.push("p0", info(DEMO, 9, "c9"));
    assertThat(s.next(FrameCase.PUSH_ACK).getPushAck().getPushId())
        .as("stale pushes are acked too").isEqualTo("p0");
    s.push("p2", info(DEMO, 11, "c10", proto("10.0.0.1", 80)));
    s.next(FrameCase.PUSH_ACK);
    clock.runDue(); // listeners run off the transport thread, via the client's scheduler

    assertThat(events).hasSize(1);
    assertThat(events.get(0).added()).extracting(Instance::ip).containsExactly("10.0.0.1");
    assertThat(client.getAllInstances("demo")).extracting(Instance::ip)
        .containsExactly("10.0.0.1");
    assertThat(connector.queries).as("served from the cache").isEmpty();
  }

  /** The server's checksum of a list, by the server's code. */
  private static String serverChecksum(Instance... instances) {
    List<io.roster.server.model.Instance> list = new java.util.ArrayList<>();
    for (Instance i : instances) {
      list.add(new io.roster.server.model.Instance(i.ip(), i.port(), i.weight(), i.healthy(), i.enabled(),
          i.ephemeral(), i.cluster(), i.metadata(), i.instanceId()));
    }
    return io.roster.server.model.ServiceSnapshot.of(
        io.roster.server.model.ServiceKey.of(DEMO.namespace(), DEMO.group(), DEMO.name()), list, 1).checksum();
  }

  private static io.roster.proto.v1.ServiceDelta.Builder delta(long base, long revision, Instance... upserted) {
    io.roster.proto.v1.ServiceDelta.Builder d = io.roster.proto.v1.ServiceDelta.newBuilder()
        .setService(ProtoMapper.toProto(DEMO)).setBaseRevision(base).setRevision(revision);
    for (Instance i : upserted) {
      d.addUpserted(ProtoMapper.toProto(i));
    }
    return d;
  }

  @Test
  void deltaPushesApplyToTheirBaseAndAnUnknownBaseOrWrongResultAsksForTheFullState() throws Exception {
    FakeStream s = connector.latest();
    s.welcome();
    assertThat(s.hello.getHello().getFeaturesList()).as("announced").contains("delta");
    CompletableFuture<Void> call = async(() -> client.subscribe("demo", events::add));
    s.ok(s.next(FrameCase.SUBSCRIBE));
    call.get(TestTime.seconds(5).toMillis(), TimeUnit.MILLISECONDS);
    Instance a = Instance.of("10.0.0.1", 80);
    Instance b = Instance.of("10.0.0.2", 80);
    Instance c = Instance.of("10.0.0.3", 80);
    s.push("a", info(DEMO, 10, serverChecksum(a), ProtoMapper.toProto(a)));
    assertThat(s.next(FrameCase.PUSH_ACK).getPushAck().getResync()).isFalse();

    // Applied to revision 10.
    s.push("b", delta(10, 11, b).setChecksum(serverChecksum(a, b)).build());
    PushAck ack = s.next(FrameCase.PUSH_ACK).getPushAck();
    assertThat(ack.getPushId()).isEqualTo("b");
    assertThat(ack.getResync()).isFalse();
    assertThat(client.cached(DEMO)).containsExactly(a, b);
    // A change sent before the server had that ack: still against 10, which the client keeps.
    s.push("c", delta(10, 12, b, c).setChecksum(serverChecksum(a, b, c)).build());
    assertThat(s.next(FrameCase.PUSH_ACK).getPushAck().getResync()).isFalse();
    assertThat(client.cached(DEMO)).containsExactly(a, b, c);

    // A base the client never had, and a result whose checksum is not the server's.
    s.push("d", delta(5, 13, c).setChecksum(serverChecksum(a, b, c)).build());
    ack = s.next(FrameCase.PUSH_ACK).getPushAck();
    assertThat(ack.getPushId()).isEqualTo("d");
    assertThat(ack.getResync()).isTrue();
    s.push("e", delta(12, 14).addRemoved(io.roster.proto.v1.InstanceIdentity.newBuilder().setIp("10.0.0.1")
        .setPort(80).setCluster("DEFAULT")).setChecksum(serverChecksum(a, b)).build());
    assertThat(s.next(FrameCase.PUSH_ACK).getPushAck().getResync()).isTrue();
    assertThat(client.cached(DEMO)).as("unchanged").containsExactly(a, b, c);
    // A delta not newer than the cache is stale: acked, nothing changes.
    s.push("f", delta(10, 12, b).setChecksum("x").build());
    assertThat(s.next(FrameCase.PUSH_ACK).getPushAck().getResync()).isFalse();
    clock.runDue();
    assertThat(events.get(events.size() - 1).instances()).containsExactly(a, b, c);
  }

  @Test
  void pushForAServiceNotSubscribedIsAckedAndIgnored() {
    FakeStream s = connector.latest();
    s.welcome();
    s.push("px", info(DEMO, 10, "c10", proto("10.0.0.1", 80)));
    assertThat(s.next(FrameCase.PUSH_ACK).getPushAck().getPushId()).isEqualTo("px");
    assertThat(client.cached(DEMO)).isNull();
  }

  @Test
  void unsubscribedServicesAreQueriedAndWeightedSelectionNeedsACandidate() throws Exception {
    connector.queryAnswer = r -> CompletableFuture.completedFuture(QueryInstancesResponse
        .newBuilder()
        .setServiceInfo(info(DEMO, 3, "c3",
            ProtoMapper.toProto(Instance.of("10.0.0.1", 80).withWeight(0)),
            ProtoMapper.toProto(Instance.of("10.0.0.2", 80).withHealthy(false))))
        .build());
    assertThat(client.getAllInstances("demo")).hasSize(2);
    assertThat(client.selectInstances("demo", false)).extracting(Instance::ip)
        .containsExactly("10.0.0.2");
    assertThat(client.selectInstances("demo", true)).isEmpty();
    assertThatThrownBy(() -> client.selectOneHealthyInstance("demo"))
        .isInstanceOfSatisfying(RosterException.class,
            e -> assertThat(e.code()).isEqualTo(Code.NO_INSTANCE_AVAILABLE))
        .hasMessageContaining("2 instance(s) in total");
    assertThat(connector.queries.poll().getService().getName()).isEqualTo("demo");
  }

  @Test
  void aServerThatAnswersQueriesOnTheStreamGetsThemThereAndNotAsCalls() throws Exception {
    FakeStream s = connector.latest();
    s.welcome(0, List.of("query"));
    CompletableFuture<List<Instance>> call = CompletableFuture.supplyAsync(() -> client.getAllInstances("demo"), callers);
    ClientFrame q = s.next(FrameCase.QUERY);
    assertThat(q.getQuery().getService().getName()).isEqualTo("demo");
    s.result(q, Result.newBuilder().setOk(true).setQuery(QueryInstancesResponse.newBuilder()
        .setServiceInfo(info(DEMO, 3, "c3", proto("10.0.0.1", 80)))).build());
    assertThat(done(call)).extracting(Instance::ip).containsExactly("10.0.0.1");
    assertThat(connector.queries).isEmpty();

    CompletableFuture<List<Instance>> bad = CompletableFuture.supplyAsync(() -> client.getAllInstances("demo"), callers);
    s.error(s.next(FrameCase.QUERY), ErrorCode.ERROR_CODE_INVALID_ARGUMENT, "service.name: ...", "service.name");
    assertThat(failure(bad)).isInstanceOfSatisfying(RosterException.class, e -> {
      assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
      assertThat(e.field()).isEqualTo("service.name");
    });
    assertThat(connector.queries).isEmpty();
  }

  @Test
  void aStoppingServerOrALostSessionSendsTheQueryToTheRegistryCallInstead() throws Exception {
    connector.queryAnswer = r -> CompletableFuture.completedFuture(QueryInstancesResponse.newBuilder()
        .setServiceInfo(info(DEMO, 4, "c4", proto("10.0.0.2", 80))).build());
    FakeStream s = connector.latest();
    s.welcome(0, List.of("query"));

    CompletableFuture<List<Instance>> stopping = CompletableFuture.supplyAsync(() -> client.getAllInstances("demo"), callers);
    s.error(s.next(FrameCase.QUERY), ErrorCode.ERROR_CODE_UNAVAILABLE, "server shutting down", "");
    assertThat(done(stopping)).extracting(Instance::ip).containsExactly("10.0.0.2");
    assertThat(connector.queries.poll(TestServers.patience().toMillis(), TimeUnit.MILLISECONDS)).isNotNull();

    CompletableFuture<List<Instance>> lost = CompletableFuture.supplyAsync(() -> client.getAllInstances("demo"), callers);
    s.next(FrameCase.QUERY);
    s.fail();
    assertThat(done(lost)).extracting(Instance::ip).containsExactly("10.0.0.2");
    assertThat(connector.queries.poll(TestServers.patience().toMillis(), TimeUnit.MILLISECONDS)).isNotNull();
  }

  @Test
  void aServerWithoutTheQueryFeatureIsAskedByCall() {
    connector.queryAnswer = r -> CompletableFuture.completedFuture(QueryInstancesResponse.newBuilder()
        .setServiceInfo(info(DEMO, 4, "c4", proto("10.0.0.2", 80))).build());
    FakeStream s = connector.latest();
    s.welcome();
    assertThat(client.getAllInstances("demo")).hasSize(1);
    assertThat(connector.queries).hasSize(1);
    assertThat(s.sent).noneMatch(f -> f.getFrameCase() == FrameCase.QUERY);
  }

  @Test
  void closeSaysGoodbyeAndEveryLaterCallThrowsClientClosed() throws Exception {
    FakeStream s = connector.latest();
    s.welcome();
    CompletableFuture<Void> closing = async(client::close);
    org.awaitility.Awaitility.await().atMost(TestServers.patience()).until(() -> s.halfClosed);
    assertThat(closing).isNotDone();
    s.complete(); // the server finishes the stream after cleaning up
    done(closing);
    assertThat(s.cancelled).isNull();
    assertThat(connector.shutdown).isTrue();

    assertThatThrownBy(() -> client.registerInstance("demo", "10.0.0.1", 80))
        .isInstanceOf(ClientClosedException.class)
        .isInstanceOfSatisfying(RosterException.class,
            e -> assertThat(e.code()).isEqualTo(Code.CLIENT_CLOSED));
    assertThatThrownBy(() -> client.getAllInstances("demo"))
        .isInstanceOf(ClientClosedException.class);
    assertThatThrownBy(() -> client.subscribe("demo", e -> { }))
        .isInstanceOf(ClientClosedException.class);
    client.close(); // idempotent
  }

  /**
   * A call is blocked waiting for a connection (no welcome yet) when the client is closed: it
   * is woken at once with ClientClosedException. The test closes only once the caller is seen
   * parked inside the client, so a close that came before the call started (which throws
   * ClientClosedException from the entry check) cannot make it pass; and the call could wait
   * minutes on its own, so only the close can end it within the patience.
   */
  @Test
  void aCallWaitingForAConnectionFailsWithClientClosedOnClose() throws Exception {
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread caller = new Thread(() -> {
      try {
        client.subscribe("demo", events::add);
      } catch (Throwable t) {
        thrown.set(t);
      }
    }, "test-caller");
    caller.start();
    org.awaitility.Awaitility.await().atMost(TestServers.patience())
        .until(() -> caller.getState() == Thread.State.TIMED_WAITING
            && Arrays.stream(caller.getStackTrace()).anyMatch(f -> f.getClassName().equals(client.getClass().getName())));

    client.close();

    caller.join(TestServers.patience().toMillis());
    assertThat(caller.isAlive()).as("the waiting call returned").isFalse();
    assertThat(thrown.get()).isInstanceOf(ClientClosedException.class);
  }
}
