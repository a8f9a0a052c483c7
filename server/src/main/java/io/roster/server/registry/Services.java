package io.roster.server.registry;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry's core: every service's {@link ServiceEntry}, the sorted index of their keys,
 * the operators' settings, the per-owner index, the revisions, and the listeners every visible
 * change is reported to. Every change runs here (see {@link Registry} for what each does); the
 * reads, the image and the holds have their own classes over this one.
 *
 * <p>Thread-safe, as {@link Registry} says.
 */
final class Services {

  private static final Logger log = LoggerFactory.getLogger(Registry.class);

  /** Lookups go to a hash map; the sorted index serves the listings and the image. */
  final Map<ServiceKey, ServiceEntry> entries = new ConcurrentHashMap<>();
  final NavigableSet<ServiceKey> index = new ConcurrentSkipListSet<>();
  final Map<ServiceKey, ServiceSettings> settings = new ConcurrentHashMap<>();
  /**
   * Per owner, how many instances it has and in which services: the per-owner index, kept
   * exact under the service locks.
   */
  final Map<Owner, Holdings> owners = new ConcurrentHashMap<>();
  final long maxSettingsBytes;
  final AtomicLong settingsBytes = new AtomicLong();
  final ServiceLimits limits;
  final AtomicLong lastRevision = new AtomicLong();
  final long bootRevision;
  volatile long absentRevision;
  final RegistryCounters counters = new RegistryCounters();
  final Holds holds = new Holds();
  final Departures departures = new Departures();
  private final LongSupplier clockMicros;
  private final List<Registry.ChangeListener> listeners = new CopyOnWriteArrayList<>();

  Services(LongSupplier clockMicros, long maxSettingsBytes, ServiceLimits limits) {
    this.clockMicros = clockMicros;
    this.maxSettingsBytes = maxSettingsBytes;
    this.limits = limits;
    this.bootRevision = nextRevision();
    this.absentRevision = bootRevision;
  }

  void addListener(Registry.ChangeListener listener) {
    listeners.add(Objects.requireNonNull(listener));
  }

  void removeListener(Registry.ChangeListener listener) {
    listeners.remove(listener);
  }

  /** Reports one change to every listener; called after the change, outside locks. */
  void publish(ServiceKey service, @Nullable Owner owner, Change.Kind kind, long revision) {
    Change change = new Change(service, owner, kind, revision);
    for (Registry.ChangeListener l : listeners) {
      try {
        l.onChange(change);
      } catch (RuntimeException e) {
        log.warn("A change listener failed on {}", change, e);
      }
    }
  }

  /** See {@link Registry#recordDepartures}. */
  void recordDepartures(boolean on) {
    departures.record(on);
    if (!on) {
      for (ServiceEntry e : entries.values()) {
        synchronized (e) {
          e.snapshot = null;
        }
      }
    }
  }

  /** See {@link Registry#register(Owner, Claim, ServiceKey, Instance)}. */
  Instance register(Owner owner, Claim claim, ServiceKey service, Instance instance) {
    Instance stored = instance.withId(service);
    long revision = mutateAt(service, e -> e.put(owner, claim, stored, "instance"));
    if (revision >= 0) {
      publish(service, owner, Change.Kind.REGISTERED, revision);
    }
    return stored;
  }

  /** See {@link Registry#deregister(Owner, Claim, ServiceKey, InstanceKey)}. */
  boolean deregister(Owner owner, @Nullable Claim claim, ServiceKey service, InstanceKey key) {
    if (!entries.containsKey(service)) {
      return false;
    }
    long revision = mutateAt(service, e -> {
      boolean removed = e.removeIfOwned(owner, claim, key, Cause.REQUEST);
      if (removed) {
        e.departed(List.of(key));
      }
      return removed;
    });
    if (revision >= 0) {
      publish(service, owner, Change.Kind.REMOVED, revision);
    }
    return revision >= 0;
  }

  /** See {@link Registry#update(ServiceKey, InstanceKey, UnaryOperator, Boolean)}. */
  @Nullable Instance update(ServiceKey service, InstanceKey key, UnaryOperator<Instance> change,
      @Nullable Boolean hold) {
    if (!entries.containsKey(service)) {
      return null;
    }
    Instance[] stored = new Instance[1];
    Owner[] owner = new Owner[1];
    long revision = mutateAt(service, e -> {
      Registration r = e.registrations.get(key);
      if (r == null) {
        return false;
      }
      Instance updated = change.apply(r.instance()).withId(service);
      if (!updated.key().equals(key)) {
        throw new IllegalArgumentException("an update may not change the identity " + key);
      }
      boolean held = hold != null ? hold : r.held();
      if (held) {
        updated = updated.withEnabled(false);
      }
      stored[0] = updated;
      owner[0] = r.owner();
      e.hold(key, held); // first: put keeps the hold it finds
      try {
        return e.put(r.owner(), r.claim(), updated, "metadata");
      } catch (RuntimeException refused) {
        e.hold(key, r.held());
        throw refused;
      }
    });
    if (revision >= 0) {
      publish(service, owner[0], Change.Kind.UPDATED, revision);
    }
    return stored[0];
  }

  /** The operator's settings of a service (defaults when never set). */
  ServiceSettings settings(ServiceKey service) {
    return settings.getOrDefault(service, ServiceSettings.DEFAULT);
  }

  /** See {@link Registry#updateSettings}. */
  ServiceSettings updateSettings(ServiceKey service, UnaryOperator<ServiceSettings> change) {
    ServiceSettings[] result = new ServiceSettings[1];
    boolean[] thresholdChanged = new boolean[1];
    settings.compute(service, (k, old) -> {
      ServiceSettings before = old == null ? ServiceSettings.DEFAULT : old;
      ServiceSettings after = change.apply(before);
      ServiceSettings stored = after.equals(ServiceSettings.DEFAULT) ? null : after;
      long delta = (stored == null ? 0 : stored.footprint(k)) - (old == null ? 0 : old.footprint(k));
      if (delta > 0 && settingsBytes.get() + delta > maxSettingsBytes) {
        throw RegistryException.limit("service", "max-service-settings-bytes", "the settings of every service together would take "
            + (settingsBytes.get() + delta) + " bytes (limit: " + maxSettingsBytes
            + ", see --max-service-settings-bytes); settings of " + k + " not changed. Settings back to the "
            + "defaults (protect_threshold 0, no metadata) free their room");
      }
      settingsBytes.addAndGet(delta);
      thresholdChanged[0] = before.protectThreshold() != after.protectThreshold();
      result[0] = after;
      return stored;
    });
    if (thresholdChanged[0] && entries.containsKey(service)) {
      long revision = mutateAt(service, e -> true);
      if (revision >= 0) {
        publish(service, null, Change.Kind.SETTINGS, revision);
      }
    }
    return result[0];
  }

  /** See {@link Registry#replaceOwned(Owner, Claim, ServiceKey, Collection)}. */
  List<Instance> replaceOwned(Owner owner, Claim claim, ServiceKey service, Collection<Instance> instances) {
    List<Instance> stored = new ArrayList<>(instances.size());
    for (Instance i : instances) {
      stored.add(i.withId(service));
    }
    long revision = mutateAt(service, e -> e.replaceOwned(owner, claim, stored, true, Cause.REQUEST));
    if (revision >= 0) {
      publish(service, owner, stored.isEmpty() ? Change.Kind.REMOVED : Change.Kind.REGISTERED, revision);
    }
    return stored;
  }

  /** See {@link Registry#removeOwned}. */
  long removeOwned(Owner owner, ServiceKey service) {
    long revision = entries.containsKey(service)
        ? mutateAt(service, e -> e.replaceOwned(owner, Claim.NONE, List.of(), true, Cause.REQUEST)) : -1;
    if (revision >= 0) {
      publish(service, owner, Change.Kind.REMOVED, revision);
      return revision;
    }
    return snapshot(service).revision();
  }

  /** See {@link Registry#removeOwner(Owner, boolean)}: every removal counts as the owner's end. */
  void removeOwner(Owner owner, boolean departure) {
    for (ServiceKey service : servicesOf(owner)) {
      long revision = entries.containsKey(service) ? mutateAt(service,
          e -> e.replaceOwned(owner, Claim.NONE, List.of(), departure, Cause.OWNER_END)) : -1;
      if (revision >= 0) {
        publish(service, owner, Change.Kind.REMOVED, revision);
      }
    }
    owners.remove(owner);
  }

  /** See {@link Registry#servicesOf}. */
  Set<ServiceKey> servicesOf(Owner owner) {
    Holdings h = owners.get(owner);
    return h == null ? Set.of() : Set.copyOf(h.services);
  }

  /** See {@link Registry#snapshot}. */
  ServiceSnapshot snapshot(ServiceKey service) {
    ServiceEntry e = entries.get(service);
    if (e == null) {
      return ServiceSnapshot.of(service, List.of(), absentRevision, 0, departures.of(service));
    }
    ServiceSnapshot s = e.snapshot;
    if (s != null) {
      return s;
    }
    synchronized (e) {
      if (e.snapshot == null) {
        e.snapshot = ServiceSnapshot.of(service, e.instances(), e.revision, settings(service).protectThreshold(),
            departures.of(service));
      }
      return e.snapshot;
    }
  }

  /** The registration of {@code key} in {@code service} as it is now (an immutable value), or null. */
  @Nullable Registration registration(ServiceKey service, InstanceKey key) {
    ServiceEntry e = entries.get(service);
    if (e == null) {
      return null;
    }
    synchronized (e) {
      return e.registrations.get(key);
    }
  }

  long nextRevision() {
    long now = clockMicros.getAsLong();
    return lastRevision.updateAndGet(prev -> Math.max(prev + 1, now));
  }

  /**
   * Runs {@code op} on the service's entry under its lock, creating the entry if needed and
   * removing it when it ends up empty. {@code op} returns whether anything visible changed, in
   * which case the revision is bumped here. Returns the revision of the change, or -1 when
   * nothing changed.
   */
  private long mutateAt(ServiceKey service, Function<ServiceEntry, Boolean> op) {
    while (true) {
      ServiceEntry e = entries.computeIfAbsent(service, k -> {
        index.add(k);
        return new ServiceEntry(k, this);
      });
      synchronized (e) {
        if (e.removed) {
          continue;
        }
        boolean changed;
        try {
          changed = op.apply(e);
        } catch (RuntimeException refused) {
          // Refused before changing anything; an entry created for it must not stay behind.
          if (e.registrations.isEmpty()) {
            e.removed = true;
            index.remove(service);
            entries.remove(service, e);
          }
          throw refused;
        }
        if (changed) {
          e.revision = nextRevision();
          e.snapshot = null;
        }
        if (e.registrations.isEmpty()) {
          if (changed) {
            // Before the entry leaves the map: a reader that finds it absent must see an
            // absent revision at least as new as this change, or a push of the removal could
            // carry an older revision than subscribers already have.
            absentRevision = Math.max(absentRevision, e.revision);
          }
          e.removed = true;
          // Index first: a new entry for this key can only be created (and indexed) once the
          // old one has left the map, which is after this.
          index.remove(service);
          entries.remove(service, e);
        }
        return changed ? e.revision : -1;
      }
    }
  }

  /**
   * Adds {@code delta} to {@code owner}'s tally (one not attached gets a standalone one) and
   * keeps its index of services: {@code left} is what it now has in {@code service}. The
   * counters count it as {@code cause}.
   */
  void count(Owner owner, ServiceKey service, int delta, int left, Cause cause) {
    counters.counted(owner.kind(), delta, cause);
    // An owner already forgotten (its session ended) has nothing left to take away.
    Holdings h = delta > 0 ? owners.computeIfAbsent(owner, k -> new Holdings(Tally.standalone())) : owners.get(owner);
    if (h == null) {
      return;
    }
    h.tally.add(delta);
    if (left == 0) {
      h.services.remove(service);
    } else if (left == delta) {
      h.services.add(service);
    }
  }

  /** What one owner holds: its tally and the services it has instances in. */
  static final class Holdings {
    final Tally tally;
    /** Changed under the lock of the service added or removed; read without locks. */
    final Set<ServiceKey> services = ConcurrentHashMap.newKeySet();

    Holdings(Tally tally) {
      this.tally = tally;
    }
  }
}
