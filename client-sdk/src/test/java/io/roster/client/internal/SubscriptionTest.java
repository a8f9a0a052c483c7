package io.roster.client.internal;

import static io.roster.client.internal.Fixtures.snapshot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.client.Instance;
import io.roster.client.InstancesChangeEvent;
import io.roster.client.Listener;
import io.roster.client.TestServers;
import io.roster.client.internal.Subscription.Outcome;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SubscriptionTest {

  private final Instance a = Instance.of("10.0.0.1", 80);
  private final Instance b = Instance.of("10.0.0.2", 80);
  private final ExecutorService pool = Executors.newFixedThreadPool(4);

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  @Test
  void firstStateIsDeliveredWithEverythingAdded() {
    List<InstancesChangeEvent> events = new ArrayList<>();
    Subscription sub = new Subscription(Fixtures.DEMO, Runnable::run);
    sub.addListener(events::add);

    assertThat(sub.offer(snapshot(10, a, b))).isEqualTo(Outcome.CHANGED);
    sub.drainEvents();

    assertThat(events).hasSize(1);
    InstancesChangeEvent e = events.get(0);
    assertThat(e.serviceName()).isEqualTo("demo");
    assertThat(e.group()).isEqualTo("DEFAULT_GROUP");
    assertThat(e.namespace()).isEqualTo("public");
    assertThat(e.instances()).containsExactly(a, b);
    assertThat(e.added()).containsExactly(a, b);
    assertThat(e.removed()).isEmpty();
    assertThat(e.revision()).isEqualTo(10);
  }

  @Test
  void cacheNeverMovesBackwards() {
    List<InstancesChangeEvent> events = new ArrayList<>();
    Subscription sub = new Subscription(Fixtures.DEMO, Runnable::run);
    sub.addListener(events::add);
    sub.offer(snapshot(10, a, b));

    assertThat(sub.offer(snapshot(9, a))).isEqualTo(Outcome.STALE);
    assertThat(sub.offer(snapshot(10, a))).isEqualTo(Outcome.STALE);
    sub.drainEvents();

    assertThat(sub.snapshot().revision()).isEqualTo(10);
    assertThat(sub.snapshot().instances()).containsExactly(a, b);
    assertThat(events).hasSize(1);
  }

  @Test
  void noEventWhenTheVisibleContentDidNotChange() {
    List<InstancesChangeEvent> events = new ArrayList<>();
    Subscription sub = new Subscription(Fixtures.DEMO, Runnable::run);
    sub.addListener(events::add);
    sub.offer(snapshot(10, a, b));

    assertThat(sub.offer(snapshot(11, b, a))).isEqualTo(Outcome.UNCHANGED);
    sub.drainEvents();
    assertThat(events).hasSize(1);
    assertThat(sub.snapshot().revision()).as("newer revision still cached").isEqualTo(11);

    assertThat(sub.offer(snapshot(12, a))).isEqualTo(Outcome.CHANGED);
    sub.drainEvents();
    assertThat(events).hasSize(2);
    assertThat(events.get(1).removed()).containsExactly(b);
    assertThat(events.get(1).instances()).containsExactly(a);
    assertThat(events.get(1).revision()).isEqualTo(12);
  }

  @Test
  void aListenerAddedLaterGetsTheCurrentListAtOnceAndOnlyItDoes() {
    List<InstancesChangeEvent> first = new ArrayList<>();
    List<InstancesChangeEvent> second = new ArrayList<>();
    Subscription sub = new Subscription(Fixtures.DEMO, Runnable::run);
    sub.addListener(first::add);
    sub.offer(snapshot(10, a));
    sub.drainEvents();

    Listener late = second::add;
    assertThat(sub.addListener(late)).isTrue();
    assertThat(sub.addListener(late)).as("same listener twice").isFalse();
    sub.drainEvents();

    assertThat(first).hasSize(1);
    assertThat(second).hasSize(1);
    assertThat(second.get(0).added()).containsExactly(a);
    assertThat(second.get(0).instances()).containsExactly(a);
  }

  @Test
  void removedListenerHearsNothingMore() {
    List<InstancesChangeEvent> events = new ArrayList<>();
    Listener l = events::add;
    Subscription sub = new Subscription(Fixtures.DEMO, Runnable::run);
    sub.addListener(l);
    sub.offer(snapshot(1, a));
    assertThat(sub.removeListener(l)).isTrue();
    sub.drainEvents(); // the queued event is skipped: l left before it ran
    assertThat(events).isEmpty();
    assertThat(sub.hasListeners()).isFalse();
  }

  @Test
  void eventsOfOneServiceRunInOrderOneAtATime() throws Exception {
    List<Long> seen = Collections.synchronizedList(new ArrayList<>());
    List<String> overlaps = new CopyOnWriteArrayList<>();
    Object guard = new Object();
    boolean[] inside = {false};
    Subscription sub = new Subscription(Fixtures.DEMO, pool);
    sub.addListener(e -> {
      synchronized (guard) {
        if (inside[0]) {
          overlaps.add("overlap at " + e.revision());
        }
        inside[0] = true;
      }
      seen.add(e.revision());
      synchronized (guard) {
        inside[0] = false;
      }
    });

    for (int rev = 1; rev <= 200; rev++) {
      sub.offer(snapshot(rev, Instance.of("10.0.0.1", rev))); // every state visibly different
      sub.drainEvents();
    }

    // Latest wins: a listener slower than the changes may skip states, never reorders them.
    await().atMost(TestServers.patience()).until(() -> !seen.isEmpty() && seen.get(seen.size() - 1) == 200);
    assertThat(seen).isSorted().doesNotHaveDuplicates();
    assertThat(overlaps).isEmpty();
  }

  @Test
  void aThrowingListenerHarmsNoOtherListenerAndNoOtherService() throws Exception {
    List<InstancesChangeEvent> good = new CopyOnWriteArrayList<>();
    List<InstancesChangeEvent> other = new CopyOnWriteArrayList<>();
    Subscription demo = new Subscription(Fixtures.DEMO, pool);
    Subscription second = new Subscription(
        new ServiceKey("public", "DEFAULT_GROUP", "other"), pool);
    demo.addListener(e -> {
      throw new IllegalStateException("boom (expected by the test)");
    });
    demo.addListener(good::add);
    second.addListener(other::add);

    demo.offer(snapshot(1, a));
    demo.offer(snapshot(2, a, b));
    second.offer(snapshot(1, b));
    demo.drainEvents();
    second.drainEvents();

    await().atMost(TestServers.patience()).until(() -> !good.isEmpty() && other.size() == 1);
    assertThat(good.get(good.size() - 1).instances()).containsExactly(a, b);
  }

  @Test
  void aSlowListenerDelaysOnlyItsOwnService() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch otherSeen = new CountDownLatch(1);
    Subscription slow = new Subscription(Fixtures.DEMO, pool);
    Subscription fast = new Subscription(new ServiceKey("public", "DEFAULT_GROUP", "f"), pool);
    slow.addListener(e -> {
      try {
        release.await(TestServers.patience().toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
      }
    });
    fast.addListener(e -> otherSeen.countDown());

    slow.offer(snapshot(1, a));
    slow.drainEvents();
    fast.offer(snapshot(1, a));
    fast.drainEvents();

    assertThat(otherSeen.await(TestServers.patience().toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    release.countDown();
  }

  @Test
  void deactivatedSubscriptionDropsQueuedEvents() {
    List<InstancesChangeEvent> events = new ArrayList<>();
    Subscription sub = new Subscription(Fixtures.DEMO, Runnable::run);
    sub.addListener(events::add);
    sub.offer(snapshot(1, a));
    sub.deactivate();
    sub.drainEvents();
    assertThat(events).isEmpty();
    assertThat(sub.isActive()).isFalse();
  }

  @Test
  void aBlockedListenerCostsOnePendingRunNotOneEventPerChange() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    List<InstancesChangeEvent> events = new CopyOnWriteArrayList<>();
    Subscription sub = new Subscription(Fixtures.DEMO, pool);
    sub.addListener(e -> {
      events.add(e);
      try {
        release.await(TestServers.patience().toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
      }
    });
    sub.offer(snapshot(1, a));
    sub.drainEvents();
    await().atMost(TestServers.patience()).until(() -> events.size() == 1); // now blocked in the listener

    for (int rev = 2; rev <= 10_000; rev++) {
      sub.offer(snapshot(rev, rev % 2 == 0 ? b : a));
      sub.drainEvents();
    }
    release.countDown();

    await().atMost(TestServers.patience()).until(() -> events.size() == 2);
    InstancesChangeEvent last = events.get(1);
    assertThat(last.revision()).isEqualTo(10_000);
    assertThat(last.instances()).containsExactly(b);
    assertThat(last.added()).containsExactly(b);
    assertThat(last.removed()).containsExactly(a);
  }

  @Test
  void pushEmptyProtectionKeepsTheLastListAndSaysSoOnce() {
    List<InstancesChangeEvent> events = new ArrayList<>();
    Subscription sub = new Subscription(Fixtures.DEMO, Runnable::run, true);
    sub.addListener(events::add);
    sub.offer(snapshot(1, a, b));
    sub.drainEvents();

    assertThat(sub.offer(snapshot(2))).as("kept: not to be acked").isEqualTo(Outcome.KEPT);
    assertThat(sub.offer(snapshot(3))).isEqualTo(Outcome.KEPT);
    sub.drainEvents();
    assertThat(sub.snapshot().instances()).containsExactly(a, b);
    assertThat(sub.snapshot().revision()).as("the cache still moves forward").isEqualTo(3);
    assertThat(events).hasSize(2);
    assertThat(events.get(1).emptyPushIgnored()).isTrue();
    assertThat(events.get(1).instances()).containsExactly(a, b);
    assertThat(events.get(1).removed()).isEmpty();

    sub.offer(snapshot(4, b));
    sub.drainEvents();
    assertThat(events).hasSize(3);
    assertThat(events.get(2).emptyPushIgnored()).isFalse();
    assertThat(events.get(2).removed()).containsExactly(a);
  }

  @Test
  void withoutProtectionAnEmptyStateIsAnEmptyList() {
    List<InstancesChangeEvent> events = new ArrayList<>();
    Subscription sub = new Subscription(Fixtures.DEMO, Runnable::run);
    sub.addListener(events::add);
    sub.offer(snapshot(1, a));
    sub.offer(snapshot(2));
    sub.drainEvents();
    assertThat(events.get(events.size() - 1).instances()).isEmpty();
    assertThat(events.get(events.size() - 1).emptyPushIgnored()).isFalse();
  }

  @Test
  void aRejectedRunDoesNotSilenceTheServiceForGood() {
    List<InstancesChangeEvent> events = new ArrayList<>();
    boolean[] reject = {true};
    Subscription sub = new Subscription(Fixtures.DEMO, task -> {
      if (reject[0]) {
        reject[0] = false;
        throw new java.util.concurrent.RejectedExecutionException("full");
      }
      task.run();
    });
    sub.addListener(events::add);
    sub.offer(snapshot(10, a));
    sub.drainEvents(); // rejected: this run is dropped

    sub.offer(snapshot(11, a, b));
    sub.drainEvents();

    assertThat(events).hasSize(1);
    assertThat(events.get(0).instances()).containsExactly(a, b);
  }
}
