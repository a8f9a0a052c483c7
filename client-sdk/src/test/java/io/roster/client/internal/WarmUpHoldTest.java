package io.roster.client.internal;

import static io.roster.client.internal.Fixtures.DEMO;
import static io.roster.client.internal.Fixtures.info;
import static io.roster.client.internal.Fixtures.proto;
import static org.assertj.core.api.Assertions.assertThat;

import io.roster.client.Instance;
import io.roster.client.InstancesChangeEvent;
import io.roster.client.internal.FakeConnector.FakeStream;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ClientFrame.FrameCase;
import io.roster.proto.v1.QueryInstancesResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import io.roster.server.testing.TestTime;

/**
 * The warm-up hold (decision 20), on a fake clock against a fake server: a server that says in
 * its welcome that it is warming up may send states that lack live instances; the client keeps
 * what it had, applies additions at once, applies the true state when the warm-up ends, never
 * moves a revision backwards, and acks a held push only once it is applied.
 */
class WarmUpHoldTest {

  private static final long WARM_UP_MS = 3000;

  private final FakeClock clock = new FakeClock();
  private final FakeConnector connector = new FakeConnector().settlingOn(clock, () -> this.client.connection());
  private final ExecutorService callers = Executors.newCachedThreadPool();
  private final List<InstancesChangeEvent> events = new CopyOnWriteArrayList<>();
  private DefaultRosterClient client;

  private void start(boolean poll) {
    start(Fixtures.options("a:1", Duration.ofMillis(500), poll, Runnable::run));
  }

  private void start(ClientOptions options) {
    client = new DefaultRosterClient(options, ServerAddress.parseList("a:1"), connector,
        clock.scheduler(), false, clock, new Random(5));
    client.start();
    clock.runDue();
  }

  @AfterEach
  void tearDown() {
    callers.shutdownNow();
  }

  /** Subscribes on a warm server and receives A, B, C at revision 10 (acked). */
  private FakeStream subscribedWithThree() throws Exception {
    FakeStream s = connector.latest();
    s.welcome();
    CompletableFuture<Void> call = CompletableFuture.runAsync(() -> client.subscribe("demo", events::add), callers);
    s.ok(s.next(FrameCase.SUBSCRIBE));
    call.get(TestTime.seconds(5).toMillis(), TimeUnit.MILLISECONDS);
    s.push("a", info(DEMO, 10, "c10", proto("10.0.0.1", 80), proto("10.0.0.2", 80), proto("10.0.0.3", 80)));
    assertThat(s.next(FrameCase.PUSH_ACK).getPushAck().getPushId()).isEqualTo("a");
    clock.runDue();
    assertThat(events).hasSize(1);
    return s;
  }

  /** The server dies; the client reconnects to a fresh one that is warming up, and redoes. */
  private FakeStream reconnectedToAWarmingServer(FakeStream old) {
    old.fail();
    clock.forward(Duration.ofMillis(100));
    FakeStream s = connector.latest();
    assertThat(s).isNotSameAs(old);
    s.welcomeWarming(WARM_UP_MS);
    s.ok(s.next(FrameCase.SUBSCRIBE));
    return s;
  }

  private static List<String> ips(List<Instance> list) {
    List<String> ips = new ArrayList<>();
    list.forEach(i -> ips.add(i.ip()));
    return ips;
  }

  private static List<String> acks(FakeStream s) {
    List<String> ids = new ArrayList<>();
    for (ClientFrame f : s.sent) {
      if (f.getFrameCase() == FrameCase.PUSH_ACK) {
        ids.add(f.getPushAck().getPushId());
      }
    }
    return ids;
  }

  @Test
  void aShrinkIsHeldDuringWarmUpAndTheTrueStateAppliedWhenItEnds() throws Exception {
    start(false);
    FakeStream s = reconnectedToAWarmingServer(subscribedWithThree());

    // Only A is back so far: the client keeps B and C, and does not ack.
    s.push("b", info(DEMO, 20, "c20", proto("10.0.0.1", 80)));
    clock.runDue();
    assertThat(events).as("no shrink").hasSize(1);
    assertThat(ips(client.cached(DEMO))).containsExactly("10.0.0.1", "10.0.0.2", "10.0.0.3");
    assertThat(acks(s)).as("a held push is not acked").isEmpty();

    // D registers: added at once, B and C still kept.
    s.push("c", info(DEMO, 21, "c21", proto("10.0.0.1", 80), proto("10.0.0.4", 80)));
    clock.runDue();
    assertThat(events).hasSize(2);
    assertThat(ips(events.get(1).added())).containsExactly("10.0.0.4");
    assertThat(events.get(1).removed()).isEmpty();
    assertThat(ips(events.get(1).instances()))
        .containsExactly("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4");
    assertThat(events.get(1).revision()).isEqualTo(21);
    assertThat(acks(s)).isEmpty();

    // The warm-up ends (the client's own timer, from the welcome): B and C really are gone.
    clock.forward(Duration.ofMillis(WARM_UP_MS - 1));
    clock.runDue();
    assertThat(events).hasSize(2);
    clock.forward(Duration.ofMillis(1));
    clock.runDue();
    assertThat(events).hasSize(3);
    assertThat(ips(events.get(2).removed())).containsExactlyInAnyOrder("10.0.0.2", "10.0.0.3");
    assertThat(ips(events.get(2).instances())).containsExactly("10.0.0.1", "10.0.0.4");
    assertThat(events.get(2).revision()).as("the true state of the same revision").isEqualTo(21);
    assertThat(ips(client.cached(DEMO))).containsExactly("10.0.0.1", "10.0.0.4");
    assertThat(acks(s)).as("acked once applied").containsExactly("c");
  }

  @Test
  void warmUpDoneFromTheServerAppliesTheTrueStateAtOnce() throws Exception {
    start(false);
    FakeStream s = reconnectedToAWarmingServer(subscribedWithThree());
    s.push("b", info(DEMO, 20, "c20", proto("10.0.0.1", 80)));
    clock.runDue();
    assertThat(events).hasSize(1);

    s.warmUpDone();
    clock.runDue();
    assertThat(events).hasSize(2);
    assertThat(ips(events.get(1).removed())).containsExactlyInAnyOrder("10.0.0.2", "10.0.0.3");
    assertThat(acks(s)).containsExactly("b");

    // Warm now: a removal is applied and acked at once.
    s.push("c", info(DEMO, 30, "c30"));
    clock.runDue();
    assertThat(client.cached(DEMO)).isEmpty();
    assertThat(acks(s)).containsExactly("b", "c");
  }

  @Test
  void aStateThatDropsNothingEndsTheHoldAndIsAckedAtOnce() throws Exception {
    start(false);
    FakeStream s = reconnectedToAWarmingServer(subscribedWithThree());
    s.push("b", info(DEMO, 20, "c20", proto("10.0.0.1", 80)));
    s.push("c", info(DEMO, 21, "c21", proto("10.0.0.1", 80), proto("10.0.0.2", 80), proto("10.0.0.3", 80)));
    clock.runDue();
    assertThat(acks(s)).containsExactly("c");
    assertThat(events).as("nothing visible changed").hasSize(1);

    clock.forward(Duration.ofMillis(WARM_UP_MS));
    clock.runDue();
    assertThat(events).as("nothing left to apply at the end").hasSize(1);
    assertThat(acks(s)).containsExactly("c");
    assertThat(ips(client.cached(DEMO))).containsExactly("10.0.0.1", "10.0.0.2", "10.0.0.3");
  }

  @Test
  void aResentHeldPushIsNotAckedAndRevisionsNeverGoBack() throws Exception {
    start(false);
    FakeStream s = reconnectedToAWarmingServer(subscribedWithThree());
    s.push("b", info(DEMO, 20, "c20", proto("10.0.0.1", 80)));
    // The server re-sends the unacked push after its ack timeout, and an old state shows up.
    s.push("b", info(DEMO, 20, "c20", proto("10.0.0.1", 80)));
    s.push("old", info(DEMO, 15, "c15"));
    clock.runDue();
    assertThat(acks(s)).as("nothing acked while held").isEmpty();
    assertThat(ips(client.cached(DEMO))).containsExactly("10.0.0.1", "10.0.0.2", "10.0.0.3");

    clock.forward(Duration.ofMillis(WARM_UP_MS));
    clock.runDue();
    assertThat(events).hasSize(2);
    assertThat(events).extracting(InstancesChangeEvent::revision).containsExactly(10L, 20L);
    assertThat(ips(client.cached(DEMO))).containsExactly("10.0.0.1");
    assertThat(acks(s)).containsExactly("b");
  }

  @Test
  void withoutAWarmUpAShrinkIsAppliedAtOnce() throws Exception {
    start(false);
    FakeStream old = subscribedWithThree();
    old.fail();
    clock.forward(Duration.ofMillis(100));
    FakeStream s = connector.latest();
    s.welcome(); // a warm server (and no reconnect empty hold in these options)
    s.ok(s.next(FrameCase.SUBSCRIBE));
    s.push("b", info(DEMO, 20, "c20", proto("10.0.0.1", 80)));
    clock.runDue();
    assertThat(events).hasSize(2);
    assertThat(ips(events.get(1).removed())).containsExactlyInAnyOrder("10.0.0.2", "10.0.0.3");
    assertThat(acks(s)).containsExactly("b");
  }

  @Test
  void theReconnectEmptyHoldIsTheSameHoldForEmptyStatesAndAcksWhenApplied() throws Exception {
    ClientOptions o = Fixtures.options("a:1", Duration.ofMillis(500), false, Runnable::run);
    start(new ClientOptions(o.serverAddresses(), o.namespace(), o.clientId(), o.clientName(), o.labels(),
        o.requestTimeout(), o.connectTimeout(), o.pollInterval(), o.pollMaxBackoff(), o.pollEnabled(), o.reconnectInitial(),
        o.reconnectMax(), o.keepAliveTime(), o.keepAliveTimeout(), o.drainTimeout(), Duration.ofSeconds(2),
        o.pushEmptyProtection(), o.failoverDir(), o.scheduler(), o.listenerExecutor(), o.tls(), o.token()));
    FakeStream old = subscribedWithThree();
    old.fail();
    clock.forward(Duration.ofMillis(100));
    FakeStream s = connector.latest();
    s.welcome(); // a warm server: only the empty hold applies
    s.ok(s.next(FrameCase.SUBSCRIBE));

    s.push("b", info(DEMO, 20, "c20", proto("10.0.0.1", 80))); // a shrink, not an empty: applied
    clock.runDue();
    assertThat(events).hasSize(2);
    s.push("c", info(DEMO, 21, "c21")); // empty, just after a reconnect: held, not acked
    clock.runDue();
    assertThat(events).hasSize(2);
    assertThat(ips(client.cached(DEMO))).containsExactly("10.0.0.1");
    assertThat(acks(s)).containsExactly("b");

    clock.forward(Duration.ofSeconds(2));
    clock.runDue();
    assertThat(events).hasSize(3);
    assertThat(client.cached(DEMO)).isEmpty();
    assertThat(acks(s)).as("acked when applied, not at the next re-send").containsExactly("b", "c");
  }

  @Test
  void aPolledStateFromAWarmingServerIsHeldUntilTheNextSessionSettlesIt() throws Exception {
    start(true);
    FakeStream old = subscribedWithThree();
    old.fail(); // and no session again until the poll: the client is between sessions
    connector.queryAnswer = r -> CompletableFuture.completedFuture(QueryInstancesResponse.newBuilder()
        .setServiceInfo(info(DEMO, 20, "c20", proto("10.0.0.1", 80)))
        .setWarmUpRemainingMs(WARM_UP_MS)
        .build());
    clock.forward(Duration.ofSeconds(10)); // the poll interval
    assertThat(connector.queries).as("polled").isNotEmpty();
    clock.runDue();
    assertThat(ips(client.cached(DEMO))).containsExactly("10.0.0.1", "10.0.0.2", "10.0.0.3");

    // Its warm-up is over, but the answer was partial and nothing newer came: still held.
    clock.forward(Duration.ofMillis(WARM_UP_MS + 1));
    assertThat(events).hasSize(1);

    // The next session (a warm server) settles it with its own state.
    int opened = connector.streams.size();
    while (connector.streams.size() == opened) {
      clock.forward(Duration.ofMillis(50));
    }
    FakeStream s = connector.latest();
    s.welcome();
    s.ok(s.next(FrameCase.SUBSCRIBE));
    s.push("c", info(DEMO, 30, "c30", proto("10.0.0.1", 80), proto("10.0.0.4", 80)));
    clock.runDue();
    assertThat(events).hasSize(2);
    assertThat(ips(events.get(1).instances())).containsExactly("10.0.0.1", "10.0.0.4");
    assertThat(ips(events.get(1).removed())).containsExactlyInAnyOrder("10.0.0.2", "10.0.0.3");
    assertThat(acks(s)).containsExactly("c");
  }

  /** The server's checksum of a list, by the server's code. */
  private static String serverChecksum(Instance... instances) {
    List<io.roster.server.model.Instance> list = new ArrayList<>();
    for (Instance i : instances) {
      list.add(new io.roster.server.model.Instance(i.ip(), i.port(), i.weight(), i.healthy(), i.enabled(),
          i.ephemeral(), i.cluster(), i.metadata(), i.instanceId()));
    }
    return io.roster.server.model.ServiceSnapshot.of(
        io.roster.server.model.ServiceKey.of(DEMO.namespace(), DEMO.group(), DEMO.name()), list, 1).checksum();
  }

  private static io.roster.proto.v1.ServiceInfo infoOf(long revision, Instance... instances) {
    io.roster.proto.v1.ServiceInfo.Builder b = io.roster.proto.v1.ServiceInfo.newBuilder()
        .setService(ProtoMapper.toProto(DEMO)).setRevision(revision).setChecksum(serverChecksum(instances));
    for (Instance i : instances) {
      b.addInstances(ProtoMapper.toProto(i));
    }
    return b.build();
  }

  /**
   * Regression: a held state re-sent as a delta was acked at once. On a warming server the
   * session acks a state (revision 15, five instances), then is pushed one that lacks an
   * instance (revision 20): held, the cache shows the merged list at revision 20, no ack. After
   * its ack timeout the server re-sends revision 20, now as a delta against 15, the state this
   * session acked. The client found the delta "not newer than the cache" (the merged list is
   * at 20) and acked it as stale, so a drain waiting for this consumer was told it had dropped
   * an instance it still routes to (decision 20: acks follow what the cache shows).
   */
  @Test
  void aHeldStateResentAsADeltaIsNotAckedUntilItIsApplied() throws Exception {
    start(false);
    FakeStream s = reconnectedToAWarmingServer(subscribedWithThree());
    Instance a = Instance.of("10.0.0.1", 80);
    Instance b = Instance.of("10.0.0.2", 80);
    Instance c = Instance.of("10.0.0.3", 80);
    Instance d = Instance.of("10.0.0.4", 80);
    Instance e = Instance.of("10.0.0.5", 80);
    s.push("f", infoOf(15, a, b, c, d, e)); // drops nothing: applied and acked
    s.push("14", infoOf(20, a, b, c, d));   // lacks e: held
    clock.runDue();
    assertThat(acks(s)).containsExactly("f");
    assertThat(ips(client.cached(DEMO))).containsExactly("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5");

    // The server's ack timeout: revision 20 again, as a delta against 15.
    s.push("14", io.roster.proto.v1.ServiceDelta.newBuilder().setService(ProtoMapper.toProto(DEMO))
        .setBaseRevision(15).setRevision(20).setChecksum(serverChecksum(a, b, c, d))
        .addRemoved(io.roster.proto.v1.InstanceIdentity.newBuilder().setIp("10.0.0.5").setPort(80)
            .setCluster("DEFAULT"))
        .build());
    clock.runDue();
    assertThat(acks(s)).as("still held: no ack").containsExactly("f");

    clock.forward(Duration.ofMillis(WARM_UP_MS));
    clock.runDue();
    assertThat(ips(client.cached(DEMO))).containsExactly("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4");
    assertThat(acks(s)).as("acked once applied").containsExactly("f", "14");
  }

  private static io.roster.proto.v1.InstanceIdentity identity(String ip, int port) {
    return io.roster.proto.v1.InstanceIdentity.newBuilder().setIp(ip).setPort(port).setCluster("DEFAULT").build();
  }

  /**
   * The merge rule inside a warm-up: a lack the warming server lists as departed (it saw that
   * instance leave) is applied at once; a lack it does not list (it never had that instance: its
   * owner may still be reconnecting) is held; a newer state that lacks nothing unseen replaces the
   * held one at once, and is acked.
   */
  @Test
  void aDepartureTheWarmingServerSawIsAppliedAtOnceAndOnlyTheUnseenLackIsHeld() throws Exception {
    start(false);
    FakeStream s = reconnectedToAWarmingServer(subscribedWithThree());

    // B deregistered on the new server; C has not come back yet.
    s.push("b", info(DEMO, 20, "c20", proto("10.0.0.1", 80)).toBuilder()
        .addDeparted(identity("10.0.0.2", 80)).build());
    clock.runDue();
    assertThat(events).hasSize(2);
    assertThat(ips(events.get(1).removed())).as("the departure, at once").containsExactly("10.0.0.2");
    assertThat(ips(client.cached(DEMO))).as("the unseen lack, held").containsExactly("10.0.0.1", "10.0.0.3");
    assertThat(acks(s)).as("C is still held: no ack").isEmpty();

    // C's owner comes back and leaves again: now the server saw it go, and nothing is held.
    s.push("c", info(DEMO, 21, "c21", proto("10.0.0.1", 80)).toBuilder()
        .addDeparted(identity("10.0.0.2", 80)).addDeparted(identity("10.0.0.3", 80)).build());
    clock.runDue();
    assertThat(events).hasSize(3);
    assertThat(ips(events.get(2).removed())).containsExactly("10.0.0.3");
    assertThat(ips(client.cached(DEMO))).containsExactly("10.0.0.1");
    assertThat(acks(s)).as("the newer state holds nothing back: acked at once").containsExactly("c");

    clock.forward(Duration.ofMillis(WARM_UP_MS));
    clock.runDue();
    assertThat(events).as("nothing left to apply when the warm-up ends").hasSize(3);
  }

  /** A state whose every lack is a departure the server saw is applied and acked at once. */
  @Test
  void aStateThatLacksOnlyDeparturesIsAppliedAndAckedAtOnce() throws Exception {
    start(false);
    FakeStream s = reconnectedToAWarmingServer(subscribedWithThree());
    s.push("b", info(DEMO, 20, "c20", proto("10.0.0.1", 80), proto("10.0.0.2", 80)).toBuilder()
        .addDeparted(identity("10.0.0.3", 80)).build());
    clock.runDue();
    assertThat(events).hasSize(2);
    assertThat(ips(events.get(1).removed())).containsExactly("10.0.0.3");
    assertThat(acks(s)).containsExactly("b");
  }

  /** The departures a delta push lists count as a full state's do. */
  @Test
  void aDeltaThatListsTheDepartureIsAppliedAtOnce() throws Exception {
    start(false);
    FakeStream s = reconnectedToAWarmingServer(subscribedWithThree());
    Instance a = Instance.of("10.0.0.1", 80);
    Instance b = Instance.of("10.0.0.2", 80);
    Instance c = Instance.of("10.0.0.3", 80);
    s.push("f", infoOf(15, a, b, c));
    clock.runDue();
    s.push("14", io.roster.proto.v1.ServiceDelta.newBuilder().setService(ProtoMapper.toProto(DEMO))
        .setBaseRevision(15).setRevision(20).setChecksum(serverChecksum(a, b))
        .addRemoved(identity("10.0.0.3", 80)).addDeparted(identity("10.0.0.3", 80))
        .build());
    clock.runDue();
    assertThat(ips(client.cached(DEMO))).containsExactly("10.0.0.1", "10.0.0.2");
    assertThat(acks(s)).containsExactly("f", "14");
  }

  /**
   * An empty state from a server just reconnected to is held by the reconnect empty hold, unless
   * it lists every lack as departed.
   */
  @Test
  void theReconnectEmptyHoldDoesNotHoldDepartures() throws Exception {
    ClientOptions o = Fixtures.options("a:1", Duration.ofMillis(500), false, Runnable::run, Duration.ofSeconds(2));
    start(o);
    FakeStream s = reconnectedToAWarmingServer(subscribedWithThree());
    s.push("b", info(DEMO, 20, "c20").toBuilder().addDeparted(identity("10.0.0.1", 80))
        .addDeparted(identity("10.0.0.2", 80)).addDeparted(identity("10.0.0.3", 80)).build());
    clock.runDue();
    assertThat(client.cached(DEMO)).isEmpty();
    assertThat(acks(s)).containsExactly("b");
  }
}
