package io.roster.server.push;

import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.registry.Change;
import io.roster.server.registry.Registry;
import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Turns registry changes into pushes (docs/protocol.md, "Pushes and pushAck"; decisions 1, 3
 * and 4).
 *
 * <p><b>Coalescing, leading edge.</b> A change to a service that has not been pushed within
 * the window is pushed at once. A change that arrives while a push is scheduled is merged
 * into it; one that arrives within the window after a push is held until the window ends.
 * So a lone change costs one push with no added delay, and a burst costs a handful.
 *
 * <p><b>Once per revision.</b> For each revision and each distinct clusters filter one {@link
 * PushPayload} is built, and its encoding is shared by every subscriber.
 *
 * <p>It also owns the subscriber index: who is subscribed to which service. Subscribing
 * offers the current state at once.
 *
 * <p>Thread-safe. Fan-out runs on the {@link Scheduler}.
 */
public final class PushEngine implements Registry.ChangeListener {

  private final Registry registry;
  private final Scheduler scheduler;
  private final long windowNanos;
  private final Duration window;

  private final Map<ServiceKey, Set<PushTarget>> subscribers = new ConcurrentHashMap<>();
  private final Map<ServiceKey, Coalesce> coalesce = new ConcurrentHashMap<>();
  private final Map<ServiceKey, Payloads> payloads = new ConcurrentHashMap<>();
  private final DeltaPushes deltas = new DeltaPushes();
  private final PushCounters counters = new PushCounters();
  private volatile boolean stopped;

  public PushEngine(Registry registry, Scheduler scheduler, Duration window) {
    this.registry = registry;
    this.scheduler = scheduler;
    this.window = window;
    this.windowNanos = window.toNanos();
  }

  /**
   * Stops pushing changes (the server is shutting down). The sessions leaving because of the
   * shutdown would otherwise push their removal to subscribers that are leaving too, which
   * would then see every provider vanish and come back after the restart.
   */
  public void stop() {
    stopped = true;
  }

  /** Schedules a push of the change's service; returns at once (see {@link Registry.ChangeListener}). */
  @Override
  public void onChange(Change change) {
    onChange(change.service());
  }

  /** Schedules a push of {@code service} to its subscribers, if it has any; never blocks. */
  public void onChange(ServiceKey service) {
    if (stopped || !subscribers.containsKey(service)) {
      return;
    }
    Coalesce c = coalesce.computeIfAbsent(service, k -> new Coalesce());
    synchronized (c) {
      if (c.scheduled) {
        return;
      }
      c.scheduled = true;
      long sinceLast = scheduler.nanoTime() - c.lastPushNanos;
      if (c.neverPushed || sinceLast >= windowNanos) {
        scheduler.execute(() -> push(service, c));
      } else {
        scheduler.schedule(() -> push(service, c), Duration.ofNanos(windowNanos - sinceLast));
      }
    }
  }

  /** Adds {@code target} to the service's subscribers and offers it the current state. */
  public void subscribe(ServiceKey service, PushTarget target) {
    subscribers.computeIfAbsent(service, k -> ConcurrentHashMap.newKeySet()).add(target);
    target.offer(payload(service, target.clusters()));
  }

  /** Removes {@code target}; a no-op if it was not subscribed. */
  public void unsubscribe(ServiceKey service, PushTarget target) {
    subscribers.computeIfPresent(service, (k, set) -> {
      set.remove(target);
      return set.isEmpty() ? null : set;
    });
    if (!subscribers.containsKey(service)) {
      payloads.remove(service);
      coalesce.remove(service);
      deltas.forget(service);
    }
  }

  /**
   * One future per acking subscriber of {@code service} (except those {@code skip} rejects):
   * see {@link PushTarget#whenAcked}. The state at {@code revision} or later reaches them
   * through the normal push path.
   */
  public List<CompletableFuture<Boolean>> whenAcked(ServiceKey service, long revision, Predicate<PushTarget> skip) {
    Set<PushTarget> targets = subscribers.get(service);
    if (targets == null || stopped) {
      // Stopped: nothing is pushed any more, so nobody is notified and nothing is waited for.
      return List.of();
    }
    List<CompletableFuture<Boolean>> acks = new ArrayList<>(targets.size());
    for (PushTarget t : targets) {
      CompletableFuture<Boolean> f = skip.test(t) ? null : t.whenAcked(revision);
      if (f != null) {
        acks.add(f);
      }
    }
    return acks;
  }

  /** How many targets are subscribed to the service. */
  public int subscriberCount(ServiceKey service) {
    Set<PushTarget> set = subscribers.get(service);
    return set == null ? 0 : set.size();
  }

  /** How many services have at least one subscriber. */
  public int subscribedServices() {
    return subscribers.size();
  }

  /** Delta pushes against acked states, for the push queues of sessions that take them. */
  public DeltaPushes deltas() {
    return deltas;
  }

  /** What the push queues of this engine's sessions have done (the server's metrics). */
  public PushCounters counters() {
    return counters;
  }

  /** The coalescing window. */
  public Duration window() {
    return window;
  }

  /** The current state of the service as seen through a clusters filter, shared per revision. */
  public PushPayload payload(ServiceKey service, Set<String> clusters) {
    ServiceSnapshot full = registry.snapshot(service);
    Payloads p = payloads.compute(service,
        (k, old) -> old == null || old.revision < full.revision() ? new Payloads(full.revision()) : old);
    if (p.revision != full.revision()) {
      // A newer revision was cached meanwhile; this caller still gets what it read.
      return new PushPayload(full.view(clusters, false), clusters);
    }
    deltas.record(full); // a base for later deltas (a no-op when already kept)
    return p.byClusters.computeIfAbsent(clusters, c -> new PushPayload(full.view(c, false), c));
  }

  private void push(ServiceKey service, Coalesce c) {
    if (stopped) {
      return;
    }
    synchronized (c) {
      c.scheduled = false;
      c.neverPushed = false;
      c.lastPushNanos = scheduler.nanoTime();
    }
    Set<PushTarget> targets = subscribers.get(service);
    if (targets == null) {
      return;
    }
    Map<Set<String>, PushPayload> local = new HashMap<>(2);
    for (PushTarget t : targets) {
      t.offer(local.computeIfAbsent(t.clusters(), clusters -> payload(service, clusters)));
    }
  }

  /** Coalescing state of one service, guarded by its monitor. */
  private static final class Coalesce {
    boolean scheduled;
    boolean neverPushed = true;
    long lastPushNanos;
  }

  /** The payloads of one revision, one per clusters filter. */
  private static final class Payloads {
    final long revision;
    final Map<Set<String>, PushPayload> byClusters = new ConcurrentHashMap<>(2);

    Payloads(long revision) {
      this.revision = revision;
    }
  }
}
