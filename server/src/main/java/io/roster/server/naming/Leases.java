package io.roster.server.naming;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Claim;
import io.roster.server.registry.Command;
import io.roster.server.registry.Registry;
import io.roster.server.registry.Writer;
import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Heartbeat instances (the Nacos v1 HTTP API, docs/nacos-compat.md): each one is an owner of
 * kind {@link Owner.Kind#LEASE} of its own, held by this member, alive while beats come. Silent for {@code preserved.heart.beat.timeout} (15 s) it is marked unhealthy; silent for
 * {@code preserved.ip.delete.timeout} (30 s) its owner is ended, which removes it. Both are
 * registry commands through the {@link Writer}, so every member of a cluster applies them and
 * every subscriber is pushed; only the member that holds a lease decides its expiry
 * (docs/decisions.md, record 39).
 *
 * <p>A lease follows its instance: when someone else registers the instance (ownership moves,
 * decision 7) or it is removed, the lease is dropped at its next check and a beat for it is
 * answered as unknown, so that the client registers it again.
 *
 * <p>Thread-safe. Registrations and beats run on the caller's thread; expiry checks on the
 * scheduler. Changes of one lease are made under its lock, so they reach the writer in order.
 */
public final class Leases implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(Leases.class);

  /** How soon an expiry the writer refused (a cluster member cut off) is tried again. */
  static final Duration RETRY_AFTER = Duration.ofSeconds(1);

  /**
   * A heartbeat instance's timings, in Nacos's metadata keys (milliseconds).
   *
   * @param interval how often the client should beat ({@code preserved.heart.beat.interval}, 5 s)
   * @param unhealthyAfter silence after which it is marked unhealthy ({@code preserved.heart.beat.timeout}, 15 s)
   * @param deleteAfter silence after which it is removed ({@code preserved.ip.delete.timeout}, 30 s)
   */
  public record Timeouts(Duration interval, Duration unhealthyAfter, Duration deleteAfter) {

    public static final String INTERVAL = "preserved.heart.beat.interval";
    public static final String TIMEOUT = "preserved.heart.beat.timeout";
    public static final String DELETE = "preserved.ip.delete.timeout";
    /** The Nacos defaults. */
    public static final Timeouts DEFAULT = new Timeouts(Duration.ofSeconds(5), Duration.ofSeconds(15),
        Duration.ofSeconds(30));
    static final long MIN_MILLIS = 100;
    static final long MAX_MILLIS = Duration.ofDays(1).toMillis();

    /**
     * The timings an instance's metadata asks for, defaults for the keys it lacks.
     *
     * @throws RegistryException INVALID_ARGUMENT naming the key, for a value that is not a
     *     number of ms in 100..86400000, or a timeout shorter than the interval
     */
    public static Timeouts of(Map<String, String> metadata) {
      Duration interval = millis(metadata, INTERVAL, DEFAULT.interval);
      Duration timeout = millis(metadata, TIMEOUT, DEFAULT.unhealthyAfter);
      Duration delete = millis(metadata, DELETE, DEFAULT.deleteAfter);
      if (timeout.compareTo(interval) < 0 || delete.compareTo(interval) < 0) {
        throw RegistryException.invalid("metadata." + (timeout.compareTo(interval) < 0 ? TIMEOUT : DELETE),
            (timeout.compareTo(interval) < 0 ? timeout : delete).toMillis(),
            "at least " + INTERVAL + " (" + interval.toMillis() + " ms)");
      }
      return new Timeouts(interval, timeout, delete);
    }

    private static Duration millis(Map<String, String> metadata, String key, Duration fallback) {
      String v = metadata.get(key);
      if (v == null) {
        return fallback;
      }
      try {
        long ms = Long.parseLong(v.trim());
        if (ms >= MIN_MILLIS && ms <= MAX_MILLIS) {
          return Duration.ofMillis(ms);
        }
      } catch (NumberFormatException e) {
        // below
      }
      throw RegistryException.invalid("metadata." + key, v, "milliseconds " + MIN_MILLIS + ".." + MAX_MILLIS);
    }
  }

  private record Key(ServiceKey service, InstanceKey instance) {}

  /** One heartbeat instance; its mutable fields are guarded by its own lock. */
  private static final class Lease {
    final Key key;
    final Owner owner;
    final String address;
    Timeouts timeouts;
    long lastBeatNanos;
    boolean markedUnhealthy;
    /** Only the check scheduled last acts; earlier ones (before a re-registration) do nothing. */
    long checkSeq;
    Scheduler.@Nullable Cancellable pendingCheck;
    /** A registration of it has been applied: a later refusal of another one leaves it be. */
    boolean confirmed;

    Lease(Key key, Owner owner, String address, Timeouts timeouts, long now) {
      this.key = key;
      this.owner = owner;
      this.address = address;
      this.timeouts = timeouts;
      this.lastBeatNanos = now;
    }
  }

  private final Writer writer;
  private final Registry registry;
  private final Scheduler scheduler;
  private final Supplier<String> nodeId;
  private final int maxPerAddress;
  private final Map<Key, Lease> leases = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> perAddress = new ConcurrentHashMap<>();
  /** Numbers the leases, so that a late end of an old lease never ends a newer one of the same instance. */
  private final java.util.concurrent.atomic.AtomicLong leaseIds = new java.util.concurrent.atomic.AtomicLong();
  private volatile boolean closed;

  /**
   * @param nodeId this member's id, as owners carry it (known once the server has started)
   * @param maxPerAddress heartbeat instances the HTTP clients of one address may hold together
   */
  public Leases(Writer writer, Registry registry, Scheduler scheduler, Supplier<String> nodeId, int maxPerAddress) {
    this.writer = writer;
    this.registry = registry;
    this.scheduler = scheduler;
    this.nodeId = nodeId;
    this.maxPerAddress = maxPerAddress;
  }

  /**
   * Registers {@code instance} in {@code service} as a heartbeat instance (or registers it
   * again: the lease is renewed and takes the instance's new timings), for a client at {@code
   * address}. Completes with the instance as stored.
   *
   * @throws RegistryException for bad timings in its metadata, or when {@code address} holds
   *     as many heartbeat instances as allowed; the writer's refusals fail the future or are thrown
   */
  public CompletableFuture<Instance> register(ServiceKey service, Instance instance, String address) {
    return register(service, instance, address, Claim.NONE);
  }

  /**
   * Same, as the identity {@code claim} names (with auth on: decision 65); the caller has checked
   * that no other identity holds the instance.
   */
  public CompletableFuture<Instance> register(ServiceKey service, Instance instance, String address, Claim claim) {
    Timeouts timeouts = Timeouts.of(instance.metadata());
    Key key = new Key(service, instance.key());
    while (true) {
      long now = scheduler.nanoTime();
      boolean[] created = new boolean[1];
      Lease lease = leases.compute(key, (k, old) -> {
        if (old != null) {
          return old;
        }
        take(address);
        created[0] = true;
        return new Lease(k, new Owner(nodeId.get(), Owner.Kind.LEASE, ownerId(k, leaseIds.incrementAndGet())),
            address, timeouts, now);
      });
      CompletableFuture<Instance> stored;
      synchronized (lease) {
        if (leases.get(key) != lease) {
          continue; // it expired or was deregistered just now: a new lease
        }
        lease.timeouts = timeouts;
        lease.lastBeatNanos = now;
        lease.markedUnhealthy = false;
        try {
          stored = writer.submit(new Command.Register(lease.owner, service, instance, claim));
        } catch (RuntimeException e) {
          stored = CompletableFuture.failedFuture(e);
        }
      }
      stored.whenComplete((i, e) -> registered(lease, timeouts, e == null, created[0]));
      return stored;
    }
  }

  /** After a registration was applied (or refused): the lease's next check, or its end. */
  private void registered(Lease lease, Timeouts timeouts, boolean applied, boolean created) {
    synchronized (lease) {
      boolean current = leases.get(lease.key) == lease;
      if (applied && current) {
        lease.confirmed = true;
        scheduleCheck(lease, timeouts.unhealthyAfter.compareTo(timeouts.deleteAfter) < 0
            ? timeouts.unhealthyAfter : timeouts.deleteAfter);
      } else if (applied) {
        // Dropped while the registration was on its way: nothing times it, so it must not stay.
        submitEnd(lease);
      } else if (created && !lease.confirmed) {
        forget(lease);
      }
    }
  }

  /**
   * A beat for the instance {@code key} of {@code service}: renews its lease and, if it was
   * marked unhealthy, marks it healthy again. Returns the interval the client should beat at,
   * or null when this member holds no lease for it (the client should register it again).
   */
  public @Nullable Duration beat(ServiceKey service, InstanceKey key) {
    Lease lease = leases.get(new Key(service, key));
    if (lease == null) {
      return null;
    }
    synchronized (lease) {
      if (leases.get(lease.key) != lease) {
        return null;
      }
      if (!registry.owns(lease.owner, service, key)) {
        // Someone else registered it, or it was removed: the client must register again.
        if (forget(lease)) {
          submitEnd(lease); // holds nothing: only the registry's index of owners forgets it
        }
        return null;
      }
      lease.lastBeatNanos = scheduler.nanoTime();
      if (lease.markedUnhealthy) {
        lease.markedUnhealthy = false;
        submitQuietly(new Command.UpdateInstance(service, key, null, null, true, false, Map.of()), lease);
      }
      return lease.timeouts.interval;
    }
  }

  /**
   * Ends the lease of the instance {@code key} of {@code service}, which removes the instance
   * if the lease still owns it. Completes with false (and changes nothing) when this member
   * holds no lease for it.
   */
  public CompletableFuture<Boolean> deregister(ServiceKey service, InstanceKey key) {
    Lease lease = leases.get(new Key(service, key));
    if (lease == null) {
      return CompletableFuture.completedFuture(false);
    }
    synchronized (lease) {
      if (!forget(lease)) {
        return CompletableFuture.completedFuture(false);
      }
    }
    return submitEnd(lease).thenApply(v -> true);
  }

  /**
   * Ends the lease {@code owner} of the instance {@code key} of {@code service} wherever it is
   * held: here, or through the log on the member that holds it (an operator's deregistration may
   * reach any member). Completes once the instance is gone.
   */
  public CompletableFuture<Void> endAnywhere(ServiceKey service, InstanceKey key, Owner owner) {
    return deregister(service, key).thenCompose(here -> here
        ? CompletableFuture.completedFuture(null)
        : writer.submit(new Command.RemoveOwner(owner)));
  }

  /** Whether this member holds a lease for the instance {@code key} of {@code service}. */
  public boolean holds(ServiceKey service, InstanceKey key) {
    return leases.containsKey(new Key(service, key));
  }

  /** Heartbeat instances this member holds. */
  public int count() {
    return leases.size();
  }

  /** Stops deciding expiries (the server is stopping); what is registered stays. Idempotent. */
  @Override
  public void close() {
    closed = true;
  }

  /** The owner id of a lease: the instance it keeps and the lease's number on this member. */
  private static String ownerId(Key k, long n) {
    return k.service.namespace() + "/" + k.service.groupedName() + "/" + k.instance.ip() + ":" + k.instance.port()
        + "/" + k.instance.cluster() + "#" + n;
  }

  /** Schedules the lease's next check, replacing any scheduled before. Call under the lease's lock. */
  private void scheduleCheck(Lease lease, Duration in) {
    if (!closed) {
      long seq = ++lease.checkSeq;
      if (lease.pendingCheck != null) {
        lease.pendingCheck.cancel();
      }
      lease.pendingCheck = scheduler.schedule(() -> check(lease, seq),
          in.isNegative() || in.isZero() ? Duration.ofMillis(1) : in);
    }
  }

  /** Marks the lease's instance unhealthy or ends the lease when it has been silent long enough. */
  private void check(Lease lease, long seq) {
    if (closed) {
      return;
    }
    synchronized (lease) {
      if (leases.get(lease.key) != lease || lease.checkSeq != seq) {
        return;
      }
      Timeouts t = lease.timeouts;
      long silent = scheduler.nanoTime() - lease.lastBeatNanos;
      if (silent >= t.deleteAfter.toNanos()) {
        forget(lease);
        submitEnd(lease);
        return;
      }
      if (silent >= t.unhealthyAfter.toNanos() && !lease.markedUnhealthy) {
        if (!registry.owns(lease.owner, lease.key.service, lease.key.instance)) {
          forget(lease);
          submitEnd(lease); // holds nothing: only the registry's index of owners forgets it
          return;
        }
        lease.markedUnhealthy = true;
        submitQuietly(new Command.UpdateInstance(lease.key.service, lease.key.instance, null, null, false, false,
            Map.of()), lease);
      }
      Duration next = lease.markedUnhealthy ? t.deleteAfter : t.unhealthyAfter;
      scheduleCheck(lease, Duration.ofNanos(next.toNanos() - silent));
    }
  }

  /**
   * Proposes the end of a forgotten lease's owner. When the writer refuses (a cluster member
   * cut off from the log) it is tried again every {@link #RETRY_AFTER} until it is applied or
   * this closes, so that no instance is left without a lease to end it. Returns the first try.
   */
  private CompletableFuture<Void> submitEnd(Lease lease) {
    CompletableFuture<Void> ended;
    try {
      ended = writer.submit(new Command.RemoveOwner(lease.owner));
    } catch (RuntimeException e) {
      ended = CompletableFuture.failedFuture(e);
    }
    ended.whenComplete((v, e) -> {
      if (e != null && !closed) {
        log.debug("The end of {} was not applied ({}); trying again", lease.owner, e.toString());
        scheduler.schedule(() -> submitEnd(lease), RETRY_AFTER);
      }
    });
    return ended;
  }

  private void submitQuietly(Command<?> command, Lease lease) {
    try {
      writer.submit(command).whenComplete((v, e) -> {
        if (e != null) {
          log.debug("{} of {} not applied: {}", command.getClass().getSimpleName(), lease.owner, e.toString());
        }
      });
    } catch (RuntimeException e) {
      log.debug("{} of {} not applied: {}", command.getClass().getSimpleName(), lease.owner, e.toString());
    }
  }

  /** Removes the lease from the table (if it is still there) and gives back its address slot. */
  private boolean forget(Lease lease) {
    if (!leases.remove(lease.key, lease)) {
      return false;
    }
    perAddress.computeIfPresent(lease.address, (k, n) -> n.decrementAndGet() == 0 ? null : n);
    return true;
  }

  private void take(String address) {
    perAddress.compute(address, (k, n) -> {
      AtomicInteger count = n == null ? new AtomicInteger() : n;
      if (count.get() >= maxPerAddress) {
        throw RegistryException.limit("instance", "max-instances-per-address", "the HTTP clients at " + address
            + " already hold " + count.get()
            + " heartbeat instances (limit: " + maxPerAddress + ", see --max-instances-per-address)");
      }
      count.incrementAndGet();
      return count;
    });
  }
}
