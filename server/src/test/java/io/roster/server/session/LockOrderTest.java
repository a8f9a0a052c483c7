package io.roster.server.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.ServiceKey;
import io.roster.server.push.Outbound;
import io.roster.server.push.PushEngine;
import io.roster.server.push.PushPayload;
import io.roster.server.registry.Registry;
import io.roster.server.time.FakeScheduler;
import io.roster.server.time.Scheduler;
import io.roster.server.time.SystemScheduler;
import java.lang.management.ManagementFactory;
import java.lang.management.MonitorInfo;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/**
 * The server's lock order (docs/decisions.md, record 91): a session, then a service of the
 * registry, then a service's push coalescing, then a session's push queue, then the transport's
 * write lock. Each fake at the edge of the push path (the transport, a change listener, a hold
 * listener, the scheduler, an ack's callback) records the monitors its thread holds, outermost
 * first, and every record must be in that order; a lock taken against it (a queue that called back
 * into its session while writing, a registry that told its listeners under a service's lock) shows
 * up as a record out of order. The same fakes under threads that drive every path at once must
 * find no deadlock.
 */
class LockOrderTest {

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** The order, outermost first, by the class of the monitor. */
  private static final List<String> ORDER = List.of(
      "io.roster.server.session.Session",
      "io.roster.server.registry.ServiceEntry",
      "io.roster.server.push.PushEngine$Coalesce",
      "io.roster.server.push.PushQueue",
      WriteLock.class.getName());

  private static final ServiceKey ORDERS = ServiceKey.of("", "", "orders");
  private static final ServiceKey PAYMENTS = ServiceKey.of("", "", "payments");

  private final Queue<Held> records = new ConcurrentLinkedQueue<>();

  @Test
  void everyPathTakesTheLocksInTheOrder() {
    FakeScheduler clock = new FakeScheduler();
    Registry registry = new Registry(() -> 1);
    Recorded scheduler = new Recorded(clock);
    PushEngine engine = new PushEngine(registry, scheduler, Duration.ofMillis(20));
    registry.addListener(engine);
    registry.addListener(change -> record("change listener"));
    registry.onHoldEnded((service, key) -> record("hold listener"));
    SessionManager sessions = new SessionManager(registry, engine, scheduler, Duration.ofSeconds(3),
        SessionLimits.of(100, 100));
    Transport consumerLine = new Transport();
    Session consumer = sessions.open(info("consumer"), consumerLine);
    Session provider = sessions.open(info("provider"), new Transport());

    consumer.subscribe(ORDERS, java.util.Set.of(), () -> { });
    provider.register(ORDERS, instance(1)).join();
    clock.runDue();
    CompletableFuture<Boolean> acked = engine.whenAcked(ORDERS, registry.snapshot(ORDERS).revision(), t -> false)
        .get(0).whenComplete((ok, failed) -> record("ack callback"));
    consumer.ack(consumerLine.last().pushId());
    assertThat(acked).isCompletedWithValue(true);
    registry.update(ORDERS, instance(1).key(), i -> i, true);
    provider.deregister(ORDERS, instance(1).key()).join();
    provider.register(ORDERS, instance(2)).join();
    provider.drain().join();
    clock.advance(Duration.ofSeconds(4)); // a re-send after the ack timeout
    consumer.onReady();
    sessions.close(provider);
    consumer.unsubscribe(ORDERS);
    sessions.close(consumer);

    assertThat(records).as("every edge of the push path was reached")
        .extracting(h -> h.where)
        .contains("transport", "change listener", "hold listener", "scheduler", "ack callback");
    assertThat(records).as("a change listener runs outside the registry's locks")
        .filteredOn(h -> h.where.equals("change listener"))
        .allSatisfy(h -> assertThat(h.monitors).doesNotContain(ORDER.get(1)));
    assertThat(records).as("the transport writes under the push queue's lock")
        .filteredOn(h -> h.where.equals("transport"))
        .allSatisfy(h -> assertThat(h.monitors).contains(ORDER.get(3), ORDER.get(4)));
    assertInOrder();
  }

  @Test
  void sessionsProvidersAndPushesAtOnceFindNoDeadlock() throws Exception {
    Registry registry = new Registry(() -> 1);
    ExecutorService workers = Executors.newFixedThreadPool(4);
    try (SystemScheduler system = new SystemScheduler("lock-order", 2)) {
      Recorded scheduler = new Recorded(system);
      PushEngine engine = new PushEngine(registry, scheduler, Duration.ofMillis(1));
      registry.addListener(engine);
      registry.onHoldEnded((service, key) -> record("hold listener"));
      SessionManager sessions = new SessionManager(registry, engine, scheduler, Duration.ofMillis(5),
          SessionLimits.of(1000, 1000));
      List<CompletableFuture<?>> runs = new ArrayList<>();
      for (int w = 0; w < 3; w++) {
        int worker = w;
        runs.add(CompletableFuture.runAsync(() -> client(sessions, worker), workers));
      }
      runs.add(CompletableFuture.runAsync(() -> operator(registry), workers));
      CompletableFuture<Void> all = CompletableFuture.allOf(runs.toArray(CompletableFuture[]::new));
      await().atMost(Duration.ofMinutes(2))
          .until(() -> all.isDone() || THREADS.findDeadlockedThreads() != null);
      assertThat(deadlocked()).as("threads deadlocked").isEmpty();
      all.join();
    } finally {
      workers.shutdownNow();
    }
    assertInOrder();
  }

  /** One client: subscribes, registers, acks, drains and reconnects, over and over. */
  private void client(SessionManager sessions, int worker) {
    Transport line = new Transport();
    Session s = sessions.open(info("client-" + worker), line);
    for (int round = 0; round < 300; round++) {
      ServiceKey watched = round % 2 == 0 ? ORDERS : PAYMENTS;
      ServiceKey served = round % 2 == 0 ? PAYMENTS : ORDERS;
      s.subscribe(watched, java.util.Set.of(), () -> { });
      s.register(served, instance(worker)).join();
      PushPayload seen = line.last();
      if (seen != null) {
        s.ack(seen.pushId());
      }
      s.onReady();
      if (round % 7 == 0) {
        s.drain().join();
      }
      s.unsubscribe(watched);
      if (round % 25 == 24) {
        sessions.close(s);
        s = sessions.open(info("client-" + worker), line);
      }
    }
    sessions.close(s);
  }

  /** An operator holding instances out of traffic and letting them go, and the metrics reading. */
  private static void operator(Registry registry) {
    for (int round = 0; round < 900; round++) {
      InstanceKey key = instance(round % 3).key();
      registry.update(round % 2 == 0 ? ORDERS : PAYMENTS, key, i -> i, round % 4 < 2);
      registry.namespaceKinds();
    }
  }

  private List<String> deadlocked() {
    long[] ids = THREADS.findDeadlockedThreads();
    if (ids == null) {
      return List.of();
    }
    return Arrays.stream(THREADS.getThreadInfo(ids, true, false)).map(ThreadInfo::toString).toList();
  }

  private void assertInOrder() {
    assertThat(records).isNotEmpty();
    assertThat(records).as("monitors held, outermost first, against the order " + ORDER)
        .allSatisfy(h -> assertThat(inOrder(h.monitors)).as(h.where + " under " + h.monitors).isTrue());
  }

  /** Whether {@code monitors} (outermost first) never rank down the order. */
  private static boolean inOrder(List<String> monitors) {
    int rank = -1;
    for (String m : monitors) {
      int r = ORDER.indexOf(m);
      if (r < rank) {
        return false;
      }
      rank = r;
    }
    return true;
  }

  /** Records the ranked monitors this thread holds now, outermost first (each monitor once). */
  private void record(String where) {
    ThreadInfo self = THREADS.getThreadInfo(new long[] {Thread.currentThread().getId()}, true, false)[0];
    List<MonitorInfo> held = new ArrayList<>(Arrays.asList(self.getLockedMonitors()));
    held.sort(Comparator.comparingInt(MonitorInfo::getLockedStackDepth).reversed());
    List<String> ranked = new ArrayList<>();
    List<Integer> seen = new ArrayList<>();
    for (MonitorInfo m : held) {
      if (ORDER.contains(m.getClassName()) && !seen.contains(m.getIdentityHashCode())) {
        seen.add(m.getIdentityHashCode());
        ranked.add(m.getClassName());
      }
    }
    records.add(new Held(where, ranked));
  }

  private static SessionInfo info(String client) {
    return new SessionInfo(client, client, "public", "", "", Map.of(), "127.0.0.1:1", 0);
  }

  private static Instance instance(int n) {
    return new Instance("10.0.0." + (n + 1), 80, 1, true, true, true, "", Map.of(), "");
  }

  private record Held(String where, List<String> monitors) {}

  /** The stand-in for a transport's write lock (as rpc's stream takes it to write). */
  private static final class WriteLock {}

  /** A transport that writes under its own write lock, always ready; keeps the last push. */
  private final class Transport implements Outbound {
    private final WriteLock writeLock = new WriteLock();
    private volatile PushPayload last;

    @Override
    public boolean isReady() {
      synchronized (writeLock) {
        return true;
      }
    }

    @Override
    public int send(PushPayload payload) {
      synchronized (writeLock) {
        record("transport");
        last = payload;
        return 1;
      }
    }

    PushPayload last() {
      return last;
    }
  }

  /** A scheduler that records the locks held by whoever hands it work. */
  private final class Recorded implements Scheduler {
    private final Scheduler inner;

    Recorded(Scheduler inner) {
      this.inner = inner;
    }

    @Override
    public long nanoTime() {
      return inner.nanoTime();
    }

    @Override
    public long currentTimeMillis() {
      return inner.currentTimeMillis();
    }

    @Override
    public void execute(Runnable task) {
      record("scheduler");
      inner.execute(task);
    }

    @Override
    public Cancellable schedule(Runnable task, Duration delay) {
      record("scheduler");
      return inner.schedule(task, delay);
    }
  }
}
