package io.roster.server.probe;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Change;
import io.roster.server.registry.Command;
import io.roster.server.registry.HealthCheck;
import io.roster.server.registry.Registry;
import io.roster.server.registry.Writer;
import io.roster.server.time.Scheduler;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which persistent instances this member probes, when, and what it makes of the outcomes
 * (docs/persistence.md, "Server-side probes"; decision 74).
 *
 * <ul>
 *   <li><b>One prober per instance.</b> Every member ranks the live members for each instance by
 *       rendezvous hashing and probes the instances it ranks first. The live members are those
 *       the cluster's log says are up, the same list on every member once applied; when one goes
 *       down its instances spread over the others and are first probed within {@link
 *       #TAKEOVER_WITHIN} of this member learning of it. A standalone server probes them all.
 *   <li><b>Spread in time.</b> An instance's first probe falls at a point of the interval given by
 *       its hash, then one every interval: load stays flat rather than coming in waves.
 *   <li><b>Only flips are written.</b> After {@code threshold} probes in a row that disagree with
 *       the instance's stored health, the member submits that one change to the writer (so, in a
 *       cluster, through the log); a probe that agrees costs nothing beyond itself.
 * </ul>
 *
 * <p>Thread-safe: the timer and the probes' outcomes meet under this object's lock, which is
 * never held while a probe runs or a change is submitted.
 */
public final class HealthProbes implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(HealthProbes.class);
  /** How often the timer looks for probes that are due and for changes to what to probe. */
  static final Duration TICK = Duration.ofMillis(100);
  /** A member taking over a departed member's instances probes each within this. */
  static final Duration TAKEOVER_WITHIN = Duration.ofSeconds(1);

  /**
   * Who probes: this member's id and the live members' ids (one member, standalone). Read on
   * every tick, so it must be cheap.
   */
  public record Live(String self, List<String> members) {
    public Live {
      members = List.copyOf(members);
    }

    public static Live standalone() {
      return new Live("standalone", List.of("standalone"));
    }
  }

  /**
   * The probes' timing.
   *
   * @param interval between two probes of one instance
   * @param threshold probes in a row that disagree with the stored health before it is flipped
   */
  public record Timing(Duration interval, int threshold) {}

  /** What the probes have done since the start, for metrics. */
  public record Counts(long probes, long skipped, long flips, int targets) {}

  private final Registry registry;
  private final Writer writer;
  private final Probes probes;
  private final Scheduler time;
  private final Supplier<Live> live;
  private final long intervalNanos;
  private final int threshold;
  private final Registry.ChangeListener listener = this::changed;
  /** Services whose persistent instances changed since the last tick. */
  private final Set<ServiceKey> dirty = ConcurrentHashMap.newKeySet();
  private volatile boolean dirtyAll = true;
  private final AtomicLong probed = new AtomicLong();
  private final AtomicLong skipped = new AtomicLong();
  private final AtomicLong flips = new AtomicLong();
  // Guarded by this.
  private final Map<ServiceKey, Map<InstanceKey, Target>> targets = new HashMap<>();
  private int targetCount;
  private List<String> lastLive = List.of();
  private Scheduler.@Nullable Cancellable timer;
  private boolean closed;

  public HealthProbes(Registry registry, Writer writer, Probes probes, Scheduler time, Supplier<Live> live,
      Timing timing) {
    this.registry = registry;
    this.writer = writer;
    this.probes = probes;
    this.time = time;
    this.live = live;
    this.intervalNanos = timing.interval().toNanos();
    this.threshold = timing.threshold();
  }

  /** Starts probing: the first look is at once. */
  public synchronized void start() {
    registry.addListener(listener);
    timer = time.schedule(this::tickAndAgain, Duration.ZERO);
  }

  @Override
  public synchronized void close() {
    closed = true;
    registry.removeListener(listener);
    if (timer != null) {
      timer.cancel();
    }
  }

  public Counts counts() {
    synchronized (this) {
      return new Counts(probed.get(), skipped.get(), flips.get(), targetCount);
    }
  }

  /** The instances this member probes now (a copy), for tests and the admin view. */
  public synchronized Map<ServiceKey, Set<InstanceKey>> targets() {
    Map<ServiceKey, Set<InstanceKey>> copy = new HashMap<>();
    targets.forEach((s, m) -> copy.put(s, Set.copyOf(m.keySet())));
    return copy;
  }

  private void changed(Change change) {
    if (change.kind() == Change.Kind.RESTORED) {
      dirtyAll = true;
    } else if (change.owner() != null && change.owner().kind() == Owner.Kind.PERSISTENT) {
      dirty.add(change.service());
    }
  }

  private void tickAndAgain() {
    try {
      tick();
    } catch (RuntimeException e) {
      log.warn("Health probes: a round failed; the next one tries again", e);
    }
    synchronized (this) {
      if (!closed) {
        timer = time.schedule(this::tickAndAgain, TICK);
      }
    }
  }

  /** One look: what to probe (when anything changed), then the probes that are due. */
  void tick() {
    List<Target> due = new ArrayList<>();
    synchronized (this) {
      if (closed) {
        return;
      }
      long now = time.nanoTime();
      Live l = live.get();
      boolean takeover = false;
      if (!l.members().equals(lastLive)) {
        takeover = !lastLive.isEmpty();
        lastLive = l.members();
        dirtyAll = true;
      }
      if (dirtyAll) {
        dirtyAll = false;
        dirty.clear();
        Set<ServiceKey> all = new HashSet<>(registry.servicesOf(Owner.PERSISTENT));
        all.addAll(targets.keySet());
        for (ServiceKey s : all) {
          rebuild(s, l, now, takeover);
        }
      } else if (!dirty.isEmpty()) {
        for (Iterator<ServiceKey> it = dirty.iterator(); it.hasNext(); ) {
          ServiceKey s = it.next();
          it.remove();
          rebuild(s, l, now, false);
        }
      }
      for (Map<InstanceKey, Target> m : targets.values()) {
        for (Target t : m.values()) {
          if (!t.inFlight && now - t.due >= 0) {
            t.due += intervalNanos;
            if (t.due - now <= 0) {
              t.due = now + intervalNanos; // fell behind (a stall): no burst to catch up
            }
            due.add(t);
          }
        }
      }
    }
    for (Target t : due) {
      start(t);
    }
  }

  /** Brings the targets of {@code service} in line with its persistent instances and who probes them. */
  private void rebuild(ServiceKey service, Live l, long now, boolean takeover) {
    Registry.ServiceImage image = registry.serviceImage(service);
    Map<InstanceKey, Target> mine = targets.computeIfAbsent(service, k -> new HashMap<>());
    Set<InstanceKey> present = new HashSet<>();
    if (image != null && l.members().contains(l.self())) {
      long window = takeover ? Math.min(intervalNanos, TAKEOVER_WITHIN.toNanos()) : intervalNanos;
      for (Registry.Held h : image.registrations()) {
        if (h.owner().kind() != Owner.Kind.PERSISTENT) {
          continue;
        }
        InstanceKey key = h.instance().key();
        long hash = hash(service, key);
        if (!l.self().equals(prober(hash, l.members()))) {
          continue;
        }
        present.add(key);
        if (!mine.containsKey(key)) {
          mine.put(key, new Target(service, key, now + Math.floorMod(hash, Math.max(1, window))));
          targetCount++;
        }
      }
    }
    int before = mine.size();
    mine.keySet().retainAll(present);
    targetCount -= before - mine.size();
    if (mine.isEmpty()) {
      targets.remove(service);
    }
  }

  private void start(Target t) {
    Instance i = registry.instance(t.service, t.key);
    HealthCheck check = registry.settings(t.service).check(t.key.cluster());
    if (i == null || check.type() == HealthCheck.Type.NONE) {
      synchronized (this) {
        t.streak = 0;
      }
      return;
    }
    synchronized (this) {
      t.inFlight = true;
    }
    probed.incrementAndGet();
    probes.probe(i.ip(), check.port(i.port()), check, o -> outcome(t, check, o));
  }

  private void outcome(Target t, HealthCheck check, Probes.Outcome o) {
    Instance i;
    boolean healthy = o.kind() == Probes.Kind.HEALTHY;
    synchronized (this) {
      t.inFlight = false;
      Map<InstanceKey, Target> m = targets.get(t.service);
      if (closed || m == null || m.get(t.key) != t) {
        return; // no longer this member's to probe
      }
      if (o.kind() == Probes.Kind.SKIPPED) {
        skipped.incrementAndGet();
        log.debug("Probe of {} in {} skipped: {}", t.key, t.service, o.detail());
        return;
      }
      i = registry.instance(t.service, t.key);
      if (i == null || i.healthy() == healthy) {
        t.streak = 0;
        return;
      }
      if (t.streakHealthy != healthy) {
        t.streakHealthy = healthy;
        t.streak = 0;
      }
      if (++t.streak < threshold) {
        return;
      }
    }
    // The streak stays at the threshold until the stored health agrees: a flip the writer
    // refused (this member cut off) is tried again on the next outcome.
    flips.incrementAndGet();
    log.info("{} of {} is now {}: {} {} probes in a row{}", t.key, t.service, healthy ? "healthy" : "unhealthy",
        check.type(), threshold, healthy ? " answered" : " failed (" + o.detail() + ")");
    try {
      writer.submit(new Command.UpdateInstance(t.service, t.key, null, null, healthy, false, Map.of()))
          .whenComplete((r, e) -> {
            if (e != null) {
              log.debug("Could not record {} of {} {}: {}", t.key, t.service, healthy ? "healthy" : "unhealthy",
                  e.toString());
            }
          });
    } catch (RuntimeException e) {
      log.debug("Could not record {} of {} {}: {}", t.key, t.service, healthy ? "healthy" : "unhealthy", e.toString());
    }
  }

  /**
   * Which of {@code members} (the live members' ids) probes {@code key} of {@code service}: what
   * every member computes, and what an operator or a test can compute too. Null when none is live.
   */
  public static @Nullable String prober(ServiceKey service, InstanceKey key, List<String> members) {
    return prober(hash(service, key), members);
  }

  /**
   * The member that probes the instance with {@code hash}: the one that scores highest with it
   * (rendezvous hashing), so that a member leaving moves only its own instances.
   */
  static @Nullable String prober(long hash, List<String> members) {
    String best = null;
    long bestScore = 0;
    for (String m : members) {
      long score = mix(hash ^ fnv(m));
      if (best == null || Long.compareUnsigned(score, bestScore) > 0) {
        best = m;
        bestScore = score;
      }
    }
    return best;
  }

  static long hash(ServiceKey service, InstanceKey key) {
    return mix(fnv(service.namespace() + '\n' + service.group() + '\n' + service.name() + '\n' + key.ip() + '\n'
        + key.port() + '\n' + key.cluster()));
  }

  private static long fnv(String s) {
    long h = 0xcbf29ce484222325L;
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    return h;
  }

  /** A 64-bit finaliser (SplitMix64's), so that nearby inputs score far apart. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  /** One instance this member probes. Guarded by the {@link HealthProbes} lock. */
  private static final class Target {
    final ServiceKey service;
    final InstanceKey key;
    long due;
    /** Outcomes in a row that disagree with the stored health, all saying {@link #streakHealthy}. */
    int streak;
    boolean streakHealthy;
    boolean inFlight;

    Target(ServiceKey service, InstanceKey key, long due) {
      this.service = service;
      this.key = key;
      this.due = due;
    }
  }
}
