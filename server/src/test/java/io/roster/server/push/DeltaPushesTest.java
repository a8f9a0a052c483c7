package io.roster.server.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.model.Instance;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.time.FakeScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Delta pushes: what is sent to a session that takes deltas, on a fake clock. */
class DeltaPushesTest {

  private static final Duration ACK_TIMEOUT = Duration.ofSeconds(3);
  private final ServiceKey key = ServiceKey.of("", "", "big");
  private final FakeScheduler scheduler = new FakeScheduler();
  private final DeltaPushes deltas = new DeltaPushes();
  private final PushPipelineTest.RecordingOutbound out = new PushPipelineTest.RecordingOutbound();
  private final PushQueue queue = new PushQueue(out, scheduler, ACK_TIMEOUT, deltas);

  private static List<Instance> instances(int n) {
    List<Instance> list = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      list.add(new Instance("10.0." + (i / 250) + "." + (i % 250), 80, 1, true, true, true, i % 2 == 0 ? "a" : "b",
          Map.of(), ""));
    }
    return list;
  }

  /** The state at {@code revision}, recorded as pushed, as a full payload through {@code clusters}. */
  private PushPayload pushed(List<Instance> list, long revision, Set<String> clusters) {
    ServiceSnapshot full = ServiceSnapshot.of(key, list, revision);
    deltas.record(full);
    return new PushPayload(full.view(clusters, false), clusters);
  }

  @Test
  void oneChangeToALargeServiceIsSentAsADeltaAgainstTheAckedState() {
    List<Instance> list = instances(1000);
    queue.offer(key, pushed(list, 1, Set.of()));
    assertThat(out.sent.get(0).delta()).as("nothing acked yet: full").isNull();
    queue.ack(Long.toHexString(1));

    list.set(10, list.get(10).withWeight(3));
    queue.offer(key, pushed(list, 2, Set.of()));
    PushPayload second = out.sent.get(1);
    assertThat(second.delta()).isNotNull();
    assertThat(second.delta().upserted()).hasSize(1);
    assertThat(second.delta().removed()).isEmpty();
    assertThat(second.delta().base().revision()).isEqualTo(1);
    assertThat(second.pushId()).isEqualTo(Long.toHexString(2));
    assertThat(second.delta().applyTo(out.sent.get(0).snapshot().instances())).isEqualTo(second.snapshot().instances());
    assertThat(queue.sentDeltaCount()).isEqualTo(1);
  }

  @Test
  void oneDeltaPerBaseTargetAndViewIsSharedBySessions() {
    List<Instance> list = instances(100);
    PushPayload first = pushed(list, 1, Set.of("a"));
    list.remove(0);
    PushPayload second = pushed(list, 2, Set.of("a"));
    PushPayload d1 = deltas.choose(second, 1);
    assertThat(d1.delta()).isNotNull();
    assertThat(d1.delta().removed()).hasSize(1);
    assertThat(deltas.choose(second, 1)).isSameAs(d1);
    assertThat(d1.delta().applyTo(first.snapshot().instances())).isEqualTo(second.snapshot().instances());
    // Another view of the same change: only cluster "b" instances, none of which changed.
    PushPayload secondB = new PushPayload(ServiceSnapshot.of(key, list, 2).view(Set.of("b"), false), Set.of("b"));
    assertThat(deltas.choose(secondB, 1).delta().size()).isZero();
  }

  @Test
  void anUnknownOrEvictedBaseOrADeltaNoSmallerThanTheStateGetsTheFullState() {
    List<Instance> list = instances(10);
    pushed(list, 1, Set.of());
    PushPayload second = pushed(instances(2), 2, Set.of()); // 8 removed: more than the 2 left
    assertThat(deltas.choose(second, 1)).isSameAs(second);
    assertThat(deltas.choose(second, 0)).as("never pushed").isSameAs(second);
    for (long r = 3; r < 3 + DeltaPushes.STATES_PER_SERVICE; r++) {
      pushed(list, r, Set.of());
    }
    assertThat(deltas.statesKept(key)).isEqualTo(DeltaPushes.STATES_PER_SERVICE);
    PushPayload latest = pushed(list, 100, Set.of());
    assertThat(deltas.choose(latest, 1)).as("evicted").isSameAs(latest);
    deltas.forget(key);
    assertThat(deltas.statesKept(key)).isZero();
  }

  @Test
  void aResyncSendsTheFullStateAtOnceAndUntilTheClientAcksAgain() {
    List<Instance> list = instances(1000);
    queue.offer(key, pushed(list, 1, Set.of()));
    queue.ack(Long.toHexString(1));
    list.set(1, list.get(1).withWeight(2));
    queue.offer(key, pushed(list, 2, Set.of()));
    assertThat(out.sent.get(1).delta()).isNotNull();

    // The client's state was not the base: it asks for the full state instead of acking.
    assertThat(queue.ack(Long.toHexString(2), true)).isTrue();
    assertThat(out.sent).hasSize(3);
    assertThat(out.sent.get(2).delta()).isNull();
    assertThat(out.sent.get(2).revision()).isEqualTo(2);
    // A change before the client acked the full state goes in full too.
    list.set(2, list.get(2).withWeight(2));
    queue.offer(key, pushed(list, 3, Set.of()));
    assertThat(out.sent.get(3).delta()).isNull();
    assertThat(queue.ack(Long.toHexString(3))).isTrue();
    // Acked again: deltas resume.
    list.set(3, list.get(3).withWeight(2));
    queue.offer(key, pushed(list, 4, Set.of()));
    assertThat(out.sent.get(4).delta()).isNotNull();
    assertThat(out.sent.get(4).delta().base().revision()).isEqualTo(3);
    assertThat(queue.resyncCount()).isEqualTo(1);
  }

  @Test
  void anUnackedDeltaIsSentAgainAfterTheAckTimeoutAgainstTheSameBase() {
    List<Instance> list = instances(1000);
    queue.offer(key, pushed(list, 1, Set.of()));
    queue.ack(Long.toHexString(1));
    list.set(1, list.get(1).withWeight(2));
    queue.offer(key, pushed(list, 2, Set.of()));
    scheduler.advance(ACK_TIMEOUT);
    assertThat(out.sent).hasSize(3);
    assertThat(out.sent.get(2)).isSameAs(out.sent.get(1));
  }

  @Test
  void queuesWithoutAcksOrWithoutDeltasSendFullStates() {
    PushQueue watcher = new PushQueue(out, scheduler, null, deltas);
    PushQueue old = new PushQueue(out, scheduler, ACK_TIMEOUT, null);
    List<Instance> list = instances(100);
    for (PushQueue q : List.of(watcher, old)) {
      q.offer(key, pushed(list, 1, Set.of()));
      q.ack(Long.toHexString(1));
      list.set(1, list.get(1).withWeight(list.get(1).weight() + 1));
      q.offer(key, pushed(list, q == watcher ? 2 : 3, Set.of()));
    }
    assertThat(out.sent).allSatisfy(p -> assertThat(p.delta()).isNull());
  }
}
