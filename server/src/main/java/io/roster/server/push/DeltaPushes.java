package io.roster.server.push;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.roster.server.model.Instance;
import io.roster.server.model.ServiceDelta;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.model.WireSize;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Delta pushes (docs/decisions.md, record 22): instead of a service's full state, a session
 * that takes deltas is sent what changed since the last state of that service it acked, when
 * that is smaller. One change to a 10,000-instance service then costs bytes in proportion to
 * the change, not to the service.
 *
 * <p><b>What is kept, and its bounds.</b> The last {@value #STATES_PER_SERVICE} pushed states
 * of each subscribed service (full, unfiltered snapshots; they share their instances with the
 * registry and with each other, so an old state costs mostly its list), dropped when the
 * service's last subscriber leaves. A base older than those gets the full state. Each delta is
 * built and encoded once per (service, base, target, clusters view) and shared by every
 * session at that base, in a Caffeine cache bounded by weight (about the delta's wire bytes,
 * {@value #CACHE_BYTES} in total) and by time ({@link #CACHE_IDLE} since last use).
 *
 * <p>Thread-safe. {@link #choose} runs under a session's push queue lock; the build of one
 * delta blocks only the sessions that want that same delta.
 */
public final class DeltaPushes {

  /** Pushed states kept per subscribed service, as bases for deltas. */
  public static final int STATES_PER_SERVICE = 16;
  /** Approximate bytes of cached deltas, in total. */
  public static final long CACHE_BYTES = 64L * 1024 * 1024;
  /** A cached delta nobody asked for in this long is dropped. */
  public static final Duration CACHE_IDLE = Duration.ofSeconds(60);

  private record Key(ServiceKey service, long base, long target, Set<String> clusters) {}

  private final Map<ServiceKey, ArrayDeque<ServiceSnapshot>> history = new ConcurrentHashMap<>();
  /**
   * Empty: a delta would not be smaller, send the full state. Built on first use: building a
   * Caffeine cache loads its classes, 80-400 ms on a cold 2-core JVM, which server start-up
   * should not pay.
   */
  private volatile @Nullable Cache<Key, Optional<PushPayload>> deltas;

  /**
   * Builds the cache now, off the event loops (the server calls it on its scheduler once it
   * serves): the first delta push then does not pay the class loading on a transport thread.
   */
  public void prepare() {
    cache();
  }

  private Cache<Key, Optional<PushPayload>> cache() {
    Cache<Key, Optional<PushPayload>> c = deltas;
    if (c == null) {
      synchronized (this) {
        c = deltas;
        if (c == null) {
          c = Caffeine.newBuilder()
              .maximumWeight(CACHE_BYTES)
              .weigher((Key k, Optional<PushPayload> v) -> v.map(DeltaPushes::weight).orElse(64))
              .expireAfterAccess(CACHE_IDLE)
              .executor(Runnable::run)
              .build();
          deltas = c;
        }
      }
    }
    return c;
  }

  /** Remembers a state about to be pushed (the unfiltered snapshot); older ones fall off. */
  void record(ServiceSnapshot full) {
    ArrayDeque<ServiceSnapshot> states = history.computeIfAbsent(full.service(), k -> new ArrayDeque<>(4));
    synchronized (states) {
      ServiceSnapshot last = states.peekLast();
      if (last != null && last.revision() >= full.revision()) {
        return;
      }
      states.addLast(full);
      while (states.size() > STATES_PER_SERVICE) {
        states.removeFirst();
      }
    }
  }

  /** Drops the states of a service nobody subscribes to any more. */
  void forget(ServiceKey service) {
    history.remove(service);
  }

  /**
   * What to send a session that acked {@code acked} of this service and is due {@code full}:
   * a delta against {@code acked} when that state is still known and the delta has fewer
   * entries than the full state has instances, else {@code full} itself.
   */
  public PushPayload choose(PushPayload full, long acked) {
    if (full.delta() != null || acked >= full.revision()) {
      return full;
    }
    ServiceSnapshot base = find(full.snapshot().service(), acked);
    if (base == null) {
      return full;
    }
    Key key = new Key(full.snapshot().service(), acked, full.revision(), full.clusters());
    return cache().get(key, k -> build(base, full)).orElse(full);
  }

  /** How many states of {@code service} are kept (tests). */
  int statesKept(ServiceKey service) {
    ArrayDeque<ServiceSnapshot> states = history.get(service);
    if (states == null) {
      return 0;
    }
    synchronized (states) {
      return states.size();
    }
  }

  private @Nullable ServiceSnapshot find(ServiceKey service, long revision) {
    ArrayDeque<ServiceSnapshot> states = history.get(service);
    if (states == null) {
      return null;
    }
    synchronized (states) {
      for (Iterator<ServiceSnapshot> it = states.descendingIterator(); it.hasNext(); ) {
        ServiceSnapshot s = it.next();
        if (s.revision() == revision) {
          return s;
        }
        if (s.revision() < revision) {
          return null;
        }
      }
    }
    return null;
  }

  private static Optional<PushPayload> build(ServiceSnapshot base, PushPayload full) {
    ServiceDelta d = ServiceDelta.between(base.view(full.clusters(), false), full.snapshot());
    return d.size() < full.snapshot().instances().size()
        ? Optional.of(PushPayload.ofDelta(d, full.clusters()))
        : Optional.empty();
  }

  private static int weight(PushPayload p) {
    long w = 256;
    for (Instance i : Objects.requireNonNull(p.delta(), "only deltas are cached").upserted()) {
      w += WireSize.ofInstanceInList(i);
    }
    w += 32L * p.delta().removed().size();
    return (int) Math.min(Integer.MAX_VALUE, w);
  }
}
