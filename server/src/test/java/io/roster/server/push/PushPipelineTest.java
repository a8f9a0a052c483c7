package io.roster.server.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.model.Instance;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Registry;
import io.roster.server.time.FakeScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Coalescing, latest-wins, acks and re-sends, on a fake clock. */
class PushPipelineTest {

  private static final Duration WINDOW = Duration.ofMillis(20);
  private static final Duration ACK = Duration.ofSeconds(3);

  private final FakeScheduler clock = new FakeScheduler();
  private final AtomicLong micros = new AtomicLong(1_000_000);
  private final ServiceKey orders = ServiceKey.of("", "", "orders");
  private Registry registry;
  private PushEngine engine;

  @BeforeEach
  void setUp() {
    registry = new Registry(micros::incrementAndGet);
    engine = new PushEngine(registry, clock, WINDOW);
    registry.addListener(engine);
  }

  private static Instance inst(int port) {
    return new Instance("10.0.0.1", port, 1, true, true, true, "", Map.of(), "");
  }

  /** An outbound that records sends and can be made not ready. */
  static final class RecordingOutbound implements Outbound {
    final List<PushPayload> sent = new ArrayList<>();
    boolean ready = true;

    @Override
    public boolean isReady() {
      return ready;
    }

    @Override
    public int send(PushPayload payload) {
      sent.add(payload);
      return 0;
    }

    List<Integer> sizes() {
      return sent.stream().map(p -> p.snapshot().instances().size()).toList();
    }
  }

  private record Target(ServiceKey key, PushQueue queue) implements PushTarget {
    @Override
    public Set<String> clusters() {
      return Set.of();
    }

    @Override
    public void offer(PushPayload payload) {
      queue.offer(key, payload);
    }
  }

  private final java.util.IdentityHashMap<RecordingOutbound, PushQueue> queues = new java.util.IdentityHashMap<>();

  private RecordingOutbound subscribe() {
    RecordingOutbound out = new RecordingOutbound();
    PushQueue q = new PushQueue(out, clock, ACK);
    queues.put(out, q);
    engine.subscribe(orders, new Target(orders, q));
    return out;
  }

  @Test
  void subscribeGetsTheCurrentStateAtOnce() {
    registry.register(owner("p"), orders, inst(1));
    RecordingOutbound out = subscribe();
    assertThat(out.sizes()).containsExactly(1);
  }

  @Test
  void anIsolatedChangeIsPushedWithoutWaitingForTheWindow() {
    RecordingOutbound out = subscribe();
    registry.register(owner("p"), orders, inst(1));
    clock.runDue();
    assertThat(out.sizes()).containsExactly(0, 1);
  }

  @Test
  void aBurstWithinTheWindowCoalescesIntoOneMorePush() {
    RecordingOutbound out = subscribe();
    registry.register(owner("p"), orders, inst(1));
    clock.runDue();
    for (int port = 2; port <= 100; port++) {
      registry.register(owner("p"), orders, inst(port));
    }
    clock.runDue();
    assertThat(out.sizes()).containsExactly(0, 1);
    clock.advance(WINDOW.minusMillis(1));
    assertThat(out.sizes()).containsExactly(0, 1);
    clock.advance(Duration.ofMillis(1));
    assertThat(out.sizes()).containsExactly(0, 1, 100);
  }

  @Test
  void aChangeAfterAQuietWindowIsAgainImmediate() {
    RecordingOutbound out = subscribe();
    registry.register(owner("p"), orders, inst(1));
    clock.runDue();
    clock.advance(WINDOW);
    registry.register(owner("p"), orders, inst(2));
    clock.runDue();
    assertThat(out.sizes()).containsExactly(0, 1, 2);
  }

  @Test
  void oneEncodingPerRevisionSharedBySubscribers() {
    RecordingOutbound a = subscribe();
    RecordingOutbound b = subscribe();
    registry.register(owner("p"), orders, inst(1));
    clock.runDue();
    assertThat(a.sent.get(1)).isSameAs(b.sent.get(1));
    List<Object> encodings = new ArrayList<>();
    java.util.function.Function<PushPayload, Object> roster = p -> { encodings.add(p); return new Object(); };
    Object e1 = a.sent.get(1).encoded(roster);
    Object e2 = b.sent.get(1).encoded(roster);
    assertThat(e1).isSameAs(e2);
    assertThat(encodings).hasSize(1);
  }

  @Test
  void oneEncodingPerRevisionAndWireFormat() {
    RecordingOutbound a = subscribe();
    RecordingOutbound b = subscribe();
    registry.register(owner("p"), orders, inst(1));
    clock.runDue();
    java.util.function.Function<PushPayload, Object> roster = p -> "roster";
    java.util.function.Function<PushPayload, Object> nacos = p -> "nacos";
    assertThat(a.sent.get(1).encoded(roster)).isEqualTo("roster");
    assertThat(b.sent.get(1).encoded(nacos)).isEqualTo("nacos");
    assertThat(b.sent.get(1).encoded(roster)).isEqualTo("roster");
    assertThat(a.sent.get(1).encoded(p -> "another encoder instance")).isEqualTo("another encoder instance");
  }

  @Test
  void aStreamThatIsNotReadyKeepsOnlyTheLatestState() {
    RecordingOutbound slow = subscribe();
    RecordingOutbound fast = subscribe();
    slow.ready = false;
    for (int port = 1; port <= 50; port++) {
      registry.register(owner("p"), orders, inst(port));
      clock.advance(WINDOW);
    }
    assertThat(fast.sent).hasSize(51);
    assertThat(slow.sent).hasSize(1);
    slow.ready = true;
    // The session's queue is reached through its target; onReady drains what is pending.
    PushQueue q = queueOf(slow);
    assertThat(q.pendingCount()).isEqualTo(1);
    q.onReady();
    assertThat(slow.sizes()).containsExactly(0, 50);
  }

  @Test
  void unackedPushIsResentInItsLatestVersionAfterTheAckTimeout() {
    RecordingOutbound out = new RecordingOutbound();
    PushQueue q = new PushQueue(out, clock, ACK);
    engine.subscribe(orders, new Target(orders, q));
    q.ack(out.sent.get(0).pushId());
    registry.register(owner("p"), orders, inst(1));
    clock.runDue();
    assertThat(q.unacked()).isEqualTo(1);
    clock.advance(ACK.minusMillis(1));
    assertThat(out.sent).hasSize(2);
    clock.advance(Duration.ofMillis(1));
    assertThat(out.sent).hasSize(3);
    assertThat(out.sent.get(2).revision()).isEqualTo(out.sent.get(1).revision());
    assertThat(q.resentCount()).isEqualTo(1);
    q.ack(out.sent.get(2).pushId());
    clock.advance(ACK.multipliedBy(3));
    assertThat(out.sent).hasSize(3);
    assertThat(q.unacked()).isZero();
  }

  /**
   * A subscriber acks the first push; a second push goes out and is acked too: no re-send ever
   * follows, however long the clock runs. A stale payload offered after a newer one was sent is
   * dropped, so revisions only move forward on the wire.
   */
  @Test
  void acksStopResendsAndOlderRevisionsAreNeverSentAfterNewerOnes() {
    RecordingOutbound out = new RecordingOutbound();
    PushQueue q = new PushQueue(out, clock, ACK);
    engine.subscribe(orders, new Target(orders, q));
    PushPayload first = out.sent.get(0);
    assertThat(q.ack(first.pushId())).as("the first push's ack is known").isTrue();
    registry.register(owner("p"), orders, inst(1));
    clock.runDue();
    assertThat(out.sent).hasSize(2);
    assertThat(q.ack(out.sent.get(1).pushId())).as("the second push's ack is known").isTrue();
    assertThat(q.unacked()).as("pushes awaiting an ack").isZero();

    clock.advance(ACK.multipliedBy(5));
    assertThat(out.sent).as("acked pushes are never re-sent").hasSize(2);
    assertThat(q.resentCount()).isZero();

    q.offer(orders, first);
    assertThat(out.sent).as("an older revision is not sent after a newer one").hasSize(2);
    assertThat(out.sent).extracting(PushPayload::revision).isSorted();
  }

  @Test
  void anAckForAPushWaitingToBeResentCountsAndCancelsTheResend() {
    RecordingOutbound out = new RecordingOutbound();
    PushQueue q = new PushQueue(out, clock, ACK);
    engine.subscribe(orders, new Target(orders, q));
    PushPayload first = out.sent.get(0);
    var acked = q.whenAcked(orders, first.revision());
    out.ready = false;
    clock.advance(ACK); // the re-send waits in pending: the stream is not ready

    assertThat(q.ack(first.pushId())).isTrue();

    assertThat(acked).isCompletedWithValue(true);
    out.ready = true;
    q.onReady();
    assertThat(out.sent).as("no needless re-send").hasSize(1);
  }

  private PushQueue queueOf(RecordingOutbound out) {
    return queues.get(out);
  }

  /** A session owner on a node with no id (a lone registry). */
  private static Owner owner(String connectionId) {
    return Owner.session("", connectionId);
  }
}
