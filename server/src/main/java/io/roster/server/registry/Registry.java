package io.roster.server.registry;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.model.WireSize;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
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
 * The in-memory truth: which instances each service has and who owns each of them.
 *
 * <p>Every instance has one {@link Owner} (for a session: its node, its connection id). The
 * registry keeps a per-owner index (its count and its services), so ending an owner is one
 * call ({@link #removeOwner}). A change that alters what a consumer would see bumps the
 * service's revision and is reported as one {@link Change} to every {@link ChangeListener},
 * after the change, outside any lock, on the thread that made it. A change that alters nothing
 * (the same instance registered again) bumps nothing and reports nothing.
 *
 * <p>Revisions come from one hybrid clock for the whole registry: {@code max(last + 1,
 * now in µs)}. They therefore only grow, per service and globally, also when a service is
 * removed and created again, and (with a sane clock) across a server restart. A service that
 * does not exist reports {@link #absentRevision()}: at least the last revision of any service
 * that was removed, so a poller never reads an "older" empty answer than what it last saw.
 *
 * <p>Each service is bounded ({@link ServiceLimits}): its instance count and the wire bytes of
 * its instances are kept as running totals, so checking a change costs the size of the change.
 * A change that would cross a limit throws RESOURCE_EXHAUSTED before anything changes.
 *
 * <p>While it records departures ({@link #recordDepartures}, a node that warms up), each state
 * also lists the identities that left it through a departure this node saw: a deregistration, a
 * batch or drain that dropped them, the end of their owner ({@link #removeOwner(Owner)}), but not
 * an owner ended because its member went down or restarted ({@link #removeOwner(Owner, boolean)}).
 * A client holds back only the lacks that are not listed (docs/decisions.md, record 20).
 *
 * <p>Thread-safe. Changes to one service are serialised on that service; different services
 * change in parallel.
 */
public final class Registry {

  private static final Logger log = LoggerFactory.getLogger(Registry.class);

  /**
   * Told about every visible change, after it happened and outside the registry's locks.
   *
   * <p>Called on the thread that made the change: a session's transport thread (decision 13)
   * or an admin call. It must not block and should return in microseconds (hand the work to an
   * executor, as the push engine does); the caller waits for every listener. Listeners are
   * called in the order they were added; one that throws is logged and harms no other.
   * Changes of one service reach a listener in revision order only as far as their callers
   * are ordered: a listener that needs the state reads {@link #snapshot} (docs/decisions.md,
   * record 23).
   */
  @FunctionalInterface
  public interface ChangeListener {
    void onChange(Change change);
  }

  /** Lookups go to a hash map; the sorted index serves only {@link #listServices}. */
  private final Map<ServiceKey, Entry> services = new ConcurrentHashMap<>();
  private final NavigableSet<ServiceKey> index = new ConcurrentSkipListSet<>();
  private final Map<ServiceKey, ServiceSettings> settings = new ConcurrentHashMap<>();
  /**
   * Per owner, how many instances it has and in which services: the per-owner index, kept
   * exact under the service locks.
   */
  private final Map<Owner, Holdings> owners = new ConcurrentHashMap<>();
  private final LongSupplier clockMicros;
  private final long maxSettingsBytes;
  private final AtomicLong settingsBytes = new AtomicLong();
  private final ServiceLimits limits;
  private final AtomicLong lastRevision = new AtomicLong();
  private final long bootRevision;
  private volatile long absentRevision;
  private final List<ChangeListener> listeners = new CopyOnWriteArrayList<>();
  private final RegistryCounters counters = new RegistryCounters();

  /** Why instances come and go on this thread now: what {@link RegistryCounters} counts them as. */
  enum Cause { REQUEST, OWNER_END, RESTORE }

  private static final ThreadLocal<Cause> CAUSE = ThreadLocal.withInitial(() -> Cause.REQUEST);
  /**
   * While recording, per service, the identities that left it through a seen departure and
   * have not been registered since; null when not recording. Each set is immutable and
   * replaced under the service's lock (a service's entries follow one another: the next is
   * created only once the last has left the map), so readers need no lock.
   */
  private volatile @Nullable Map<ServiceKey, Set<InstanceKey>> departures;
  /**
   * Operator holds read from disk at a standalone server's start whose instances have not been
   * registered again since (see {@link #restoreHolds}); each set is changed under its service's
   * lock. {@code anyRestored} keeps the look-up off the path of every registration once none is left.
   */
  private final Map<ServiceKey, Set<InstanceKey>> restoredHolds = new ConcurrentHashMap<>();
  private volatile boolean anyRestored;
  private volatile @Nullable HoldListener holdListener;

  /**
   * Told when an operator's hold ends because its instance left the registry (deregistered, its
   * owner ended): what a standalone server's durable state must forget. Called under the
   * service's lock: it must only hand the key over.
   */
  @FunctionalInterface
  public interface HoldListener {
    void holdEnded(ServiceKey service, InstanceKey key);
  }


  /** A registry with the default {@link ServiceLimits}. */
  public Registry(LongSupplier clockMicros) {
    this(clockMicros, Long.MAX_VALUE, ServiceLimits.DEFAULT);
  }

  /**
   * @param clockMicros wall clock in microseconds since the epoch
   * @param maxSettingsBytes what all services' settings may take together (see {@link
   *     ServiceSettings#footprint}); settings outlive instances, so nothing else bounds them
   */
  public Registry(LongSupplier clockMicros, long maxSettingsBytes) {
    this(clockMicros, maxSettingsBytes, ServiceLimits.DEFAULT);
  }

  /** A registry with these service limits and no bound on settings. */
  public Registry(LongSupplier clockMicros, ServiceLimits limits) {
    this(clockMicros, Long.MAX_VALUE, limits);
  }

  /**
   * @param clockMicros wall clock in microseconds since the epoch
   * @param maxSettingsBytes what all services' settings may take together (see {@link
   *     ServiceSettings#footprint}); settings outlive instances, so nothing else bounds them
   * @param limits what one service may hold
   */
  public Registry(LongSupplier clockMicros, long maxSettingsBytes, ServiceLimits limits) {
    this.clockMicros = clockMicros;
    this.maxSettingsBytes = maxSettingsBytes;
    this.limits = limits;
    this.bootRevision = nextRevision();
    this.absentRevision = bootRevision;
  }

  /**
   * Starts or stops listing departures in states (see the class comment): on while the node
   * warms up, off (and forgotten) once it is warm. Turning it off drops the states kept for
   * reads, so that none is served with a list any more.
   */
  public void recordDepartures(boolean on) {
    departures = on ? new ConcurrentHashMap<>() : null;
    if (!on) {
      for (Entry e : services.values()) {
        synchronized (e) {
          e.snapshot = null;
        }
      }
    }
  }

  /** Adds a listener of every change from now on (see {@link ChangeListener} for its contract). */
  public void addListener(ChangeListener listener) {
    listeners.add(Objects.requireNonNull(listener));
  }

  /** Removes a listener added before; a no-op for one that was not. */
  public void removeListener(ChangeListener listener) {
    listeners.remove(listener);
  }

  /** Reports one change to every listener; called after the change, outside locks. */
  private void publish(ServiceKey service, @Nullable Owner owner, Change.Kind kind, long revision) {
    Change change = new Change(service, owner, kind, revision);
    for (ChangeListener l : listeners) {
      try {
        l.onChange(change);
      } catch (RuntimeException e) {
        log.warn("A change listener failed on {}", change, e);
      }
    }
  }

  /**
   * Counts {@code owner}'s instances in {@code tally} (and so in its wider tallies) from now
   * on. Call before the owner registers anything; {@link #removeOwner} forgets it.
   */
  public void attachOwner(Owner owner, Tally tally) {
    owners.put(owner, new Holdings(Objects.requireNonNull(tally)));
  }

  /**
   * The services in which {@code owner} has at least one instance now (a copy; instances that
   * moved to another owner no longer count). Costs O(services of that owner).
   */
  public Set<ServiceKey> servicesOf(Owner owner) {
    Holdings h = owners.get(owner);
    return h == null ? Set.of() : Set.copyOf(h.services);
  }

  /**
   * The owners that {@code which} selects among those holding at least one instance (or
   * attached): costs O(owners). For the rare sweeps of the cluster (the owners of a member that
   * is down).
   */
  public List<Owner> owners(java.util.function.Predicate<Owner> which) {
    List<Owner> found = new ArrayList<>();
    for (Owner o : owners.keySet()) {
      if (which.test(o)) {
        found.add(o);
      }
    }
    found.sort(java.util.Comparator.comparing(Owner::toString));
    return found;
  }

  /** How many instances {@code owner} has, over every service: one read. */
  public int ownedCount(Owner owner) {
    Holdings h = owners.get(owner);
    return h == null ? 0 : h.tally.count();
  }

  /** How many instances {@code owner} has in {@code service}: one read under the service's lock. */
  public int ownedCount(Owner owner, ServiceKey service) {
    Entry e = services.get(service);
    if (e == null) {
      return 0;
    }
    synchronized (e) {
      int[] n = e.byOwner.get(owner);
      return n == null ? 0 : n[0];
    }
  }

  /**
   * Registers or replaces {@code instance} (by ip, port, cluster) and makes {@code owner} its
   * owner. Returns the instance as stored (with its id).
   */
  public Instance register(Owner owner, ServiceKey service, Instance instance) {
    return register(owner, Claim.NONE, service, instance);
  }

  /**
   * Same, as the session {@code claim} names: an instance a newer session of the same client
   * holds is left as it is (see {@link Claim}).
   */
  public Instance register(Owner owner, Claim claim, ServiceKey service, Instance instance) {
    Instance stored = instance.withId(service);
    long revision = mutateAt(service, e -> e.put(owner, claim, stored, "instance"));
    if (revision >= 0) {
      publish(service, owner, Change.Kind.REGISTERED, revision);
    }
    return stored;
  }

  /**
   * Removes the instance with this identity if {@code owner} owns it. Returns false (and
   * changes nothing) when there is no such instance or someone else owns it.
   */
  public boolean deregister(Owner owner, ServiceKey service, InstanceKey key) {
    return deregister(owner, null, service, key);
  }

  /**
   * Same, as the identity {@code claim} names when {@code owner} is {@link Owner#PERSISTENT}: a
   * persistent instance that another identity registered is removed only by that identity or an
   * admin of its service (PERMISSION_DENIED naming who registered it, nothing changed). Every
   * member applies this check to the log's entries, so a race between members cannot pass it.
   *
   * @param claim null: no identity check (what an owner's own session removes it holds anyway)
   */
  public boolean deregister(Owner owner, @Nullable Claim claim, ServiceKey service, InstanceKey key) {
    if (!services.containsKey(service)) {
      return false;
    }
    long revision = mutateAt(service, e -> {
      boolean removed = e.removeIfOwned(owner, claim, key);
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

  /**
   * Puts an instance in or out of traffic, whoever owns it (operators). Returns false when
   * there is no such instance; a no-op when it is already so. Enabling ends an operator's hold.
   */
  public boolean setEnabled(ServiceKey service, InstanceKey key, boolean enabled) {
    return update(service, key, i -> i.withEnabled(enabled), enabled ? Boolean.FALSE : null) != null;
  }

  /**
   * Changes an instance in place, keeping its owner (operators). {@code change} must keep the
   * identity (ip, port, cluster). Returns the instance as stored, or null when there is no
   * such instance. A change that alters nothing costs no revision and no push.
   */
  public @Nullable Instance update(ServiceKey service, InstanceKey key, UnaryOperator<Instance> change) {
    return update(service, key, change, null);
  }

  /**
   * Same, and sets whether an operator holds the instance out of traffic ({@code hold}; null
   * leaves it as it is). A held instance is stored disabled whoever registers it again (its
   * owner's redo, another owner taking it over), until an operator enables it or it leaves the
   * registry (docs/decisions.md, record 40).
   */
  public @Nullable Instance update(ServiceKey service, InstanceKey key, UnaryOperator<Instance> change,
      @Nullable Boolean hold) {
    if (!services.containsKey(service)) {
      return null;
    }
    Instance[] stored = new Instance[1];
    Owner[] owner = new Owner[1];
    long revision = mutateAt(service, e -> {
      Registration r = e.registrations.get(key);
      if (r == null) {
        return false;
      }
      Instance updated = change.apply(r.instance).withId(service);
      if (!updated.key().equals(key)) {
        throw new IllegalArgumentException("an update may not change the identity " + key);
      }
      boolean held = hold != null ? hold : r.held;
      if (held) {
        updated = updated.withEnabled(false);
      }
      stored[0] = updated;
      owner[0] = r.owner;
      e.hold(key, held); // first: put keeps the hold it finds
      try {
        return e.put(r.owner, r.claim, updated, "metadata");
      } catch (RuntimeException refused) {
        e.hold(key, r.held);
        throw refused;
      }
    });
    if (revision >= 0) {
      publish(service, owner[0], Change.Kind.UPDATED, revision);
    }
    return stored[0];
  }

  /** The operator's settings of a service (defaults when never set). */
  public ServiceSettings settings(ServiceKey service) {
    return settings.getOrDefault(service, ServiceSettings.DEFAULT);
  }

  /**
   * Changes a service's settings. When the protect threshold changes and the service has
   * instances, it gets a new revision and a push (the visible state may change with it).
   * Settings outlive the service's instances: they are the operator's, not the providers'.
   */
  public ServiceSettings updateSettings(ServiceKey service, UnaryOperator<ServiceSettings> change) {
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
    if (thresholdChanged[0] && services.containsKey(service)) {
      long revision = mutateAt(service, e -> true);
      if (revision >= 0) {
        publish(service, null, Change.Kind.SETTINGS, revision);
      }
    }
    return result[0];
  }

  /** Whether {@code owner} still owns the instance with this identity. */
  public boolean owns(Owner owner, ServiceKey service, InstanceKey key) {
    Entry e = services.get(service);
    if (e == null) {
      return false;
    }
    synchronized (e) {
      Registration r = e.registrations.get(key);
      return r != null && r.owner.equals(owner);
    }
  }

  /** The instance with this identity as stored (disabled ones too), or null when there is none. */
  public @Nullable Instance instance(ServiceKey service, InstanceKey key) {
    Registration r = registration(service, key);
    return r == null ? null : r.instance;
  }

  /** The claim of the instance {@code key} of {@code service} (who registered it); null when it is not registered. */
  public @Nullable Claim claimOf(ServiceKey service, InstanceKey key) {
    Registration r = registration(service, key);
    return r == null ? null : r.claim;
  }

  /** Who holds the instance {@code key} of {@code service}; null when it is not registered. */
  public @Nullable Owner ownerOf(ServiceKey service, InstanceKey key) {
    Registration r = registration(service, key);
    return r == null ? null : r.owner;
  }

  /** Whether an operator holds the registered instance {@code key} of {@code service} out of traffic. */
  public boolean held(ServiceKey service, InstanceKey key) {
    Registration r = registration(service, key);
    return r != null && r.held;
  }

  /** Sets who is told of holds ended by their instance leaving (one listener; null: none). */
  public void onHoldEnded(@Nullable HoldListener listener) {
    this.holdListener = listener;
  }

  /**
   * Holds read back from disk at a standalone server's start, before it serves: the first
   * registration of each such instance is stored disabled and held, as if the instance had never
   * left, until {@link #endRestoredHolds} (the end of the warm-up, by which its owner had time to
   * come back).
   */
  public void restoreHolds(Map<ServiceKey, Set<InstanceKey>> holds) {
    holds.forEach((service, keys) -> {
      Set<InstanceKey> set = ConcurrentHashMap.newKeySet();
      set.addAll(keys);
      restoredHolds.merge(service, set, (a, b) -> {
        a.addAll(b);
        return a;
      });
    });
    anyRestored = !restoredHolds.isEmpty();
  }

  /**
   * The restored holds whose instances did not come back: they end now, as the hold of an
   * instance that left the registry does. Returns them, by service.
   */
  public Map<ServiceKey, Set<InstanceKey>> endRestoredHolds() {
    Map<ServiceKey, Set<InstanceKey>> ended = new HashMap<>();
    for (ServiceKey service : new ArrayList<>(restoredHolds.keySet())) {
      Set<InstanceKey> left = restoredHolds.remove(service);
      if (left == null) {
        continue;
      }
      // A registration under way may have taken its hold from the set just removed.
      Set<InstanceKey> gone = new java.util.HashSet<>();
      for (InstanceKey key : left) {
        if (!held(service, key)) {
          gone.add(key);
        }
      }
      if (!gone.isEmpty()) {
        ended.put(service, Set.copyOf(gone));
      }
    }
    anyRestored = !restoredHolds.isEmpty();
    return ended;
  }

  /** The registration of {@code key} in {@code service} as it is now (an immutable value), or null. */
  private @Nullable Registration registration(ServiceKey service, InstanceKey key) {
    Entry e = services.get(service);
    if (e == null) {
      return null;
    }
    synchronized (e) {
      return e.registrations.get(key);
    }
  }

  /**
   * Makes {@code instances} the complete set that {@code owner} has in {@code service}: adds,
   * replaces and removes in one change (one revision, one push).
   */
  public List<Instance> replaceOwned(Owner owner, ServiceKey service, Collection<Instance> instances) {
    return replaceOwned(owner, Claim.NONE, service, instances);
  }

  /** Same, as the session {@code claim} names (see {@link Claim}). */
  public List<Instance> replaceOwned(Owner owner, Claim claim, ServiceKey service, Collection<Instance> instances) {
    List<Instance> stored = new ArrayList<>(instances.size());
    for (Instance i : instances) {
      stored.add(i.withId(service));
    }
    long revision = mutateAt(service, e -> e.replaceOwned(owner, claim, stored, true));
    if (revision >= 0) {
      publish(service, owner, stored.isEmpty() ? Change.Kind.REMOVED : Change.Kind.REGISTERED, revision);
    }
    return stored;
  }

  /**
   * Removes every instance {@code owner} has in {@code service} (a drain). Returns the revision
   * from which the service no longer shows them: the revision of this change, or the current
   * one when there was nothing to remove. Any state pushed afterwards has at least this
   * revision (an absent service is pushed at the absent revision, which is never older).
   */
  public long removeOwned(Owner owner, ServiceKey service) {
    long revision = services.containsKey(service)
        ? mutateAt(service, e -> e.replaceOwned(owner, Claim.NONE, List.of(), true)) : -1;
    if (revision >= 0) {
      publish(service, owner, Change.Kind.REMOVED, revision);
      return revision;
    }
    return snapshot(service).revision();
  }

  /**
   * Removes everything {@code owner} owns (its session, connection or lease ended: a departure
   * this node saw), found through the per-owner index, and forgets the owner and its tally. Each
   * affected service gets one revision and one change report. Costs O(services of that owner).
   * The owner must not register concurrently (a session calls this once it is closed).
   */
  public void removeOwner(Owner owner) {
    removeOwner(owner, true);
  }

  /**
   * Same; {@code departure} false for an owner ended for want of news of it (its member went
   * down or restarted, and it did not come back within the grace): its instances are not listed
   * as departed, since nothing here saw them leave.
   */
  public void removeOwner(Owner owner, boolean departure) {
    CAUSE.set(Cause.OWNER_END);
    try {
      for (ServiceKey service : servicesOf(owner)) {
        long revision = services.containsKey(service)
            ? mutateAt(service, e -> e.replaceOwned(owner, Claim.NONE, List.of(), departure)) : -1;
        if (revision >= 0) {
          publish(service, owner, Change.Kind.REMOVED, revision);
        }
      }
    } finally {
      CAUSE.remove();
    }
    owners.remove(owner);
  }

  /** What this registry has taken in and let go, for the server's metrics. */
  public RegistryCounters counters() {
    return counters;
  }

  /** The current visible state; an empty state at {@link #absentRevision()} if unknown. */
  public ServiceSnapshot snapshot(ServiceKey service) {
    Entry e = services.get(service);
    if (e == null) {
      return ServiceSnapshot.of(service, List.of(), absentRevision, 0, departedFrom(service));
    }
    ServiceSnapshot s = e.snapshot;
    if (s != null) {
      return s;
    }
    synchronized (e) {
      if (e.snapshot == null) {
        e.snapshot = ServiceSnapshot.of(service, e.instances(), e.revision, settings(service).protectThreshold(),
            departedFrom(service));
      }
      return e.snapshot;
    }
  }

  /** What a state of {@code service} lists as departed: null when not recording. */
  private @Nullable Set<InstanceKey> departedFrom(ServiceKey service) {
    Map<ServiceKey, Set<InstanceKey>> d = departures;
    return d == null ? null : d.getOrDefault(service, Set.of());
  }

  /** The limits every service is held to. */
  public ServiceLimits limits() {
    return limits;
  }

  /** Counters of one service, or null when it does not exist. */
  public @Nullable ServiceStats stats(ServiceKey service) {
    Entry e = services.get(service);
    if (e == null) {
      return null;
    }
    synchronized (e) {
      int healthy = 0;
      for (Registration r : e.registrations.values()) {
        healthy += r.instance.healthy() ? 1 : 0;
      }
      return new ServiceStats(e.registrations.size(), healthy, e.revision, e.bytes);
    }
  }

  /** One page of the services of a namespace (and group, when non-empty), sorted. */
  public ServicePage listServices(String namespace, String group, int pageNo, int pageSize) {
    return listServices(namespace, group, k -> true, pageNo, pageSize);
  }

  /**
   * One page of the services of a namespace (and group, when non-empty) that {@code which}
   * selects, sorted; the total counts those it selects.
   */
  public ServicePage listServices(String namespace, String group, java.util.function.Predicate<ServiceKey> which,
      int pageNo, int pageSize) {
    int total = 0;
    List<ServiceKey> page = new ArrayList<>(Math.min(pageSize, 128));
    int skip = (pageNo - 1) * pageSize;
    for (ServiceKey k : index.tailSet(lowest(namespace, group), true)) {
      if (!k.namespace().equals(namespace) || (!group.isEmpty() && !k.group().equals(group))) {
        break;
      }
      if (!which.test(k)) {
        continue;
      }
      if (total >= skip && page.size() < pageSize) {
        page.add(k);
      }
      total++;
    }
    return new ServicePage(total, page);
  }

  /** A namespace and how many services and instances it has. */
  public record NamespaceCount(String namespace, int services, int instances) {}

  /** A namespace's services, and its instances by the kind of their owner. */
  public static final class NamespaceKinds {
    private final String namespace;
    private int services;
    private final int[] instances = new int[Owner.Kind.values().length];

    NamespaceKinds(String namespace) {
      this.namespace = namespace;
    }

    public String namespace() {
      return namespace;
    }

    /** Its services that have instances. */
    public int services() {
      return services;
    }

    /** Its instances whose owners are of {@code kind}. */
    @SuppressWarnings("EnumOrdinal") // an index into the counts built here, never stored or sent
    public int instances(Owner.Kind kind) {
      return instances[kind.ordinal()];
    }

    /** All its instances. */
    public int instances() {
      int sum = 0;
      for (int n : instances) {
        sum += n;
      }
      return sum;
    }
  }

  /** Every namespace that has a service, in order, with its services and its instances by owner kind. */
  @SuppressWarnings("EnumOrdinal") // an index into the counts built here
  public List<NamespaceKinds> namespaceKinds() {
    List<NamespaceKinds> out = new ArrayList<>();
    NamespaceKinds current = null;
    for (ServiceKey k : index) {
      if (current == null || !k.namespace().equals(current.namespace)) {
        current = new NamespaceKinds(k.namespace());
        out.add(current);
      }
      current.services++;
      Entry e = services.get(k);
      if (e != null) {
        synchronized (e) {
          for (Map.Entry<Owner, int[]> held : e.byOwner.entrySet()) {
            current.instances[held.getKey().kind().ordinal()] += held.getValue()[0];
          }
        }
      }
    }
    return out;
  }

  /** Every namespace that has a service, in order, with its counts. */
  public List<NamespaceCount> namespaces() {
    List<NamespaceCount> out = new ArrayList<>();
    String current = null;
    int serviceCount = 0;
    int instanceCount = 0;
    for (ServiceKey k : index) {
      if (!k.namespace().equals(current)) {
        if (current != null) {
          out.add(new NamespaceCount(current, serviceCount, instanceCount));
        }
        current = k.namespace();
        serviceCount = 0;
        instanceCount = 0;
      }
      serviceCount++;
      Entry e = services.get(k);
      if (e != null) {
        synchronized (e) {
          instanceCount += e.registrations.size();
        }
      }
    }
    if (current != null) {
      out.add(new NamespaceCount(current, serviceCount, instanceCount));
    }
    return out;
  }

  /** Estimated bytes all services' settings take (see {@link ServiceSettings#footprint}). */
  public long settingsBytes() {
    return settingsBytes.get();
  }

  /** How many services exist (have at least one instance). */
  public int serviceCount() {
    return services.size();
  }

  /**
   * One registration in an {@link Image}.
   *
   * @param operatorHeld an operator holds it out of traffic (see {@link #update(ServiceKey,
   *     InstanceKey, UnaryOperator, Boolean)})
   */
  public record Held(Owner owner, Instance instance, Claim claim, boolean operatorHeld) {
    public Held(Owner owner, Instance instance) {
      this(owner, instance, Claim.NONE, false);
    }

    public Held(Owner owner, Instance instance, Claim claim) {
      this(owner, instance, claim, false);
    }
  }

  /** One service in an {@link Image}: its revision and registrations. */
  public record ServiceImage(ServiceKey service, long revision, List<Held> registrations) {}

  /**
   * Everything the registry holds, as values: what a cluster member writes to a snapshot and
   * loads again ({@link #image}, {@link #restore}).
   */
  public record Image(long lastRevision, long absentRevision, List<ServiceImage> services,
      Map<ServiceKey, ServiceSettings> settings) {}

  /**
   * An image of the whole registry, services in key order. Consistent only while nothing
   * changes it: a cluster member takes it on the thread that applies the log.
   */
  public Image image() {
    List<ServiceImage> list = new ArrayList<>(services.size());
    for (ServiceKey key : index) {
      ServiceImage image = serviceImage(key);
      if (image != null) {
        list.add(image);
      }
    }
    return new Image(lastRevision.get(), absentRevision, list, Map.copyOf(settings));
  }

  /**
   * One service as values: its revision and every registration, disabled and held ones too,
   * in instance order; null when it does not exist.
   */
  public @Nullable ServiceImage serviceImage(ServiceKey key) {
    Entry e = services.get(key);
    if (e == null) {
      return null;
    }
    synchronized (e) {
      List<Held> held = new ArrayList<>(e.registrations.size());
      for (Registration r : e.registrations.values()) {
        held.add(new Held(r.owner, r.instance, r.claim, r.held));
      }
      held.sort((a, b) -> Instance.ORDER.compare(a.instance(), b.instance()));
      return new ServiceImage(key, e.revision, held);
    }
  }

  /**
   * Replaces everything with {@code image} (a cluster member that loads a snapshot), keeping
   * owners' tallies exact, and reports every service that existed before or after as one
   * {@link Change.Kind#RESTORED} change. Must not run concurrently with any other change.
   */
  public void restore(Image image) {
    CAUSE.set(Cause.RESTORE);
    try {
      restoreUncounted(image);
    } finally {
      CAUSE.remove();
    }
  }

  private void restoreUncounted(Image image) {
    java.util.Set<ServiceKey> touched = new java.util.TreeSet<>(services.keySet());
    for (Entry e : new ArrayList<>(services.values())) {
      synchronized (e) {
        for (Registration r : new ArrayList<>(e.registrations.values())) {
          e.removeIfOwned(r.owner, r.instance.key());
        }
        e.removed = true;
      }
    }
    Map<ServiceKey, Set<InstanceKey>> seen = departures;
    if (seen != null) {
      // What was seen leaving stays listed unless the image has it again.
      Map<ServiceKey, Set<InstanceKey>> kept = new ConcurrentHashMap<>();
      Map<ServiceKey, ServiceImage> byKey = new HashMap<>();
      image.services().forEach(si -> byKey.put(si.service(), si));
      seen.forEach((k, gone) -> {
        Set<InstanceKey> rest = new java.util.HashSet<>(gone);
        ServiceImage si = byKey.get(k);
        if (si != null) {
          si.registrations().forEach(h -> rest.remove(h.instance().key()));
        }
        if (!rest.isEmpty()) {
          kept.put(k, Set.copyOf(rest));
        }
      });
      departures = kept;
    }
    services.clear();
    index.clear();
    settings.clear();
    settingsBytes.set(0);
    image.settings().forEach((k, v) -> {
      settings.put(k, v);
      settingsBytes.addAndGet(v.footprint(k));
    });
    for (ServiceImage si : image.services()) {
      Entry e = new Entry(si.service());
      synchronized (e) {
        for (Held h : si.registrations()) {
          e.store(h.owner(), h.claim(), h.instance(), WireSize.ofInstanceInList(h.instance()));
          e.hold(h.instance().key(), h.operatorHeld());
        }
        e.revision = si.revision();
      }
      services.put(si.service(), e);
      index.add(si.service());
      touched.add(si.service());
    }
    owners.values().removeIf(h -> h.tally.count() == 0 && h.services.isEmpty() && h.tally.isStandalone());
    lastRevision.set(image.lastRevision());
    absentRevision = image.absentRevision();
    for (ServiceKey k : touched) {
      publish(k, null, Change.Kind.RESTORED, snapshot(k).revision());
    }
  }

  /** Revision reported for services that do not exist. */
  public long absentRevision() {
    return absentRevision;
  }

  /** The first revision of this registry: nothing it reports is older. */
  public long bootRevision() {
    return bootRevision;
  }

  private long nextRevision() {
    long now = clockMicros.getAsLong();
    return lastRevision.updateAndGet(prev -> Math.max(prev + 1, now));
  }

  /**
   * Sorts before every real key of that namespace (and group): "-" is the smallest character
   * names may contain, and keys sort by {@link String#compareTo}.
   */
  private static ServiceKey lowest(String namespace, String group) {
    return new ServiceKey(namespace, group.isEmpty() ? "-" : group, "-");
  }

  /**
   * Runs {@code op} on the service's entry under its lock, creating the entry if needed and
   * removing it when it ends up empty. {@code op} returns whether anything visible changed, in
   * which case the revision is bumped here. Returns the revision of the change, or -1 when
   * nothing changed.
   */
  private long mutateAt(ServiceKey service, Function<Entry, Boolean> op) {
    while (true) {
      Entry e = services.computeIfAbsent(service, k -> {
        index.add(k);
        return new Entry(k);
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
            services.remove(service, e);
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
          services.remove(service, e);
        }
        return changed ? e.revision : -1;
      }
    }
  }

  /**
   * @param size the instance's wire bytes in a list ({@link WireSize#ofInstanceInList})
   * @param held an operator holds it out of traffic: whoever registers it again, it is stored disabled
   */
  private record Registration(Owner owner, Instance instance, int size, Claim claim, boolean held) {}

  /** Counters of one service; {@code bytes} is the wire size of its instances (see {@link ServiceLimits}). */
  public record ServiceStats(int instanceCount, int healthyCount, long revision, long bytes) {}

  /** One page of service keys and how many there are in total. */
  public record ServicePage(int total, List<ServiceKey> services) {}

  /**
   * Adds {@code delta} to {@code owner}'s tally (one not attached gets a standalone one) and
   * keeps its index of services: {@code left} is what it now has in {@code service}.
   */
  private void count(Owner owner, ServiceKey service, int delta, int left) {
    counters.counted(owner.kind(), delta, CAUSE.get());
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
  private static final class Holdings {
    final Tally tally;
    /** Changed under the lock of the service added or removed; read without locks. */
    final Set<ServiceKey> services = ConcurrentHashMap.newKeySet();

    Holdings(Tally tally) {
      this.tally = tally;
    }
  }

  /** A service's mutable state, guarded by its own monitor. */
  private final class Entry {
    final ServiceKey service;
    final Map<InstanceKey, Registration> registrations = new HashMap<>();
    /** Instances per owner in this service (an int[1] each, to count in place). */
    final Map<Owner, int[]> byOwner = new HashMap<>(4);
    /** Sum of the registrations' sizes. */
    long bytes;
    long revision;
    volatile @Nullable ServiceSnapshot snapshot;
    boolean removed;

    Entry(ServiceKey service) {
      this.service = service;
    }

    List<Instance> instances() {
      List<Instance> list = new ArrayList<>(registrations.size());
      for (Registration r : registrations.values()) {
        list.add(r.instance);
      }
      return list;
    }

    /**
     * Stores {@code instance}, unless a newer session of the same client holds it (then nothing
     * changes); {@code field} names it in a refusal.
     */
    boolean put(Owner owner, Claim claim, Instance instance, String field) {
      checkKind(owner, instance);
      Registration old = registrations.get(instance.key());
      if (old != null) {
        // Every persistent instance has the same owner: the identity is what tells them apart.
        checkReplaceable(old, claim, instance.key(), field);
        if (!old.owner.equals(owner) && old.claim.newerThan(claim)) {
          return false;
        }
      }
      instance = heldBack(old, instance);
      int size = WireSize.ofInstanceInList(instance);
      checkLimits(old == null ? 1 : 0, size - (old == null ? 0 : old.size), field);
      return store(owner, claim, instance, size);
    }

    /**
     * Refuses, changing nothing, an instance of the other kind than the service's: a service is
     * ephemeral or persistent, by the instances it has (Nacos 3's rule); and a persistent instance
     * has no owner, an ephemeral one has one.
     */
    private void checkKind(Owner owner, Instance instance) {
      boolean persistent = owner.kind() == Owner.Kind.PERSISTENT;
      if (persistent == instance.ephemeral()) {
        throw RegistryException.invalid("ephemeral", instance.ephemeral(), persistent
            ? "false: a persistent instance" : "true: an instance registered over a connection or with heartbeats");
      }
      for (Registration r : registrations.values()) {
        if (r.instance.ephemeral() != instance.ephemeral()) {
          throw new RegistryException(RegistryException.Kind.FAILED_PRECONDITION, "ephemeral", "service " + service
              + " has " + kind(r.instance) + " instances, and a service is either ephemeral or persistent: "
              + "deregister its " + kind(r.instance) + " instances before registering " + kind(instance) + " ones, "
              + "or use another service");
        }
        return; // they are all of one kind: the first says which
      }
    }

    private static String kind(Instance i) {
      return i.ephemeral() ? "ephemeral" : "persistent";
    }

    /** {@code instance} disabled when an operator holds the registration it replaces. */
    private Instance heldBack(@Nullable Registration old, Instance instance) {
      boolean held = old != null ? old.held : restoredHold(instance.key(), false);
      return held ? instance.withEnabled(false) : instance;
    }

    /** Whether a hold restored from disk waits for {@code key}; {@code take} ends the wait. */
    private boolean restoredHold(InstanceKey key, boolean take) {
      if (!anyRestored) {
        return false;
      }
      Set<InstanceKey> keys = restoredHolds.get(service);
      return keys != null && (take ? keys.remove(key) : keys.contains(key));
    }

    /** A held registration left: its hold ends with it. */
    private void holdEnded(Registration r) {
      HoldListener l = holdListener;
      if (r.held && l != null) {
        l.holdEnded(service, r.instance.key());
      }
    }

    /** Sets whether an operator holds the registration of {@code key} (if there is one). */
    void hold(InstanceKey key, boolean held) {
      Registration r = registrations.get(key);
      if (r != null && r.held != held) {
        registrations.put(key, new Registration(r.owner, r.instance, r.size, r.claim, held));
      }
    }

    /**
     * Refuses (PERMISSION_DENIED, nothing changed) when another identity registered {@code key}
     * and {@code claim}'s is not an admin (decision 65).
     */
    private void checkReplaceable(Registration old, Claim claim, InstanceKey key, String field) {
      if (!old.claim.replaceableBy(claim)) {
        throw new RegistryException(RegistryException.Kind.PERMISSION_DENIED, field, "instance " + key
            + " is registered by \"" + old.claim.identity() + "\": only that identity or an admin may replace it");
      }
    }

    /** Stores without checking limits, keeping an operator's hold; returns whether the visible instance changed. */
    private boolean store(Owner owner, Claim claim, Instance instance, int size) {
      claim = claim.stored();
      Registration before = registrations.get(instance.key());
      if (before == null) {
        returned(instance.key());
      }
      boolean held = before != null ? before.held : restoredHold(instance.key(), true);
      Registration old = registrations.put(instance.key(), new Registration(owner, instance, size, claim, held));
      bytes += size - (old == null ? 0 : old.size);
      if (old == null) {
        counted(owner, 1);
      } else if (!old.owner.equals(owner)) {
        counted(old.owner, -1);
        counted(owner, 1);
      }
      return old == null || !old.instance.equals(instance);
    }

    /**
     * Throws RESOURCE_EXHAUSTED when the service would cross a limit after adding {@code
     * moreInstances} and {@code moreBytes} (either may be negative).
     */
    void checkLimits(int moreInstances, long moreBytes, String field) {
      int count = registrations.size() + moreInstances;
      if (moreInstances > 0 && count > limits.maxInstances()) {
        throw RegistryException.limit(field, "max-instances-per-service", "service " + service + " would have " + count
            + " instances (limit: " + limits.maxInstances() + ", see --max-instances-per-service)");
      }
      long total = bytes + moreBytes;
      if (moreBytes > 0 && total > limits.maxBytes()) {
        throw RegistryException.limit(field, "max-service-bytes", "service " + service + " would hold " + total
            + " bytes of instances (limit: " + limits.maxBytes() + ", see --max-service-bytes; "
            + "the metadata of its instances is what usually fills it)");
      }
    }

    boolean removeIfOwned(Owner owner, InstanceKey key) {
      return removeIfOwned(owner, null, key);
    }

    /** Same, refusing when {@code claim} (if any) may not remove what another identity registered. */
    boolean removeIfOwned(Owner owner, @Nullable Claim claim, InstanceKey key) {
      Registration r = registrations.get(key);
      if (r == null || !r.owner.equals(owner)) {
        return false;
      }
      if (claim != null && !r.claim.replaceableBy(claim)) {
        throw new RegistryException(RegistryException.Kind.PERMISSION_DENIED, "", "instance " + key
            + " is registered by \"" + r.claim.identity() + "\": only that identity or an admin may deregister it");
      }
      registrations.remove(key);
      counted(owner, -1);
      bytes -= r.size;
      holdEnded(r);
      return true;
    }

    /** Keeps the per-owner counts of this entry and the owner's tally in step. */
    private void counted(Owner owner, int delta) {
      int[] n = byOwner.computeIfAbsent(owner, k -> new int[1]);
      n[0] += delta;
      if (n[0] == 0) {
        byOwner.remove(owner);
      }
      count(owner, service, delta, n[0]);
    }

    /** The registration of {@code key} is back: it is no longer listed as departed. */
    private void returned(InstanceKey key) {
      Map<ServiceKey, Set<InstanceKey>> d = departures;
      Set<InstanceKey> gone = d == null ? null : d.get(service);
      if (d != null && gone != null && gone.contains(key)) {
        Set<InstanceKey> rest = new java.util.HashSet<>(gone);
        rest.remove(key);
        if (rest.isEmpty()) {
          d.remove(service);
        } else {
          d.put(service, Set.copyOf(rest));
        }
      }
    }

    /** {@code keys} left through a departure seen here: listed, up to the bound, while recording. */
    void departed(Collection<InstanceKey> keys) {
      Map<ServiceKey, Set<InstanceKey>> d = departures;
      if (d == null || keys.isEmpty()) {
        return;
      }
      Set<InstanceKey> gone = d.getOrDefault(service, Set.of());
      if (gone.size() >= ServiceSnapshot.MAX_DEPARTED) {
        return;
      }
      Set<InstanceKey> more = new java.util.HashSet<>(gone);
      for (InstanceKey k : keys) {
        if (more.size() == ServiceSnapshot.MAX_DEPARTED) {
          break;
        }
        more.add(k);
      }
      d.put(service, Set.copyOf(more));
    }

    /**
     * @param departure whether what this drops left through a departure seen here (see {@link
     *     #departed})
     */
    boolean replaceOwned(Owner owner, Claim claim, List<Instance> instances, boolean departure) {
      for (Instance i : instances) {
        checkKind(owner, i);
      }
      Map<InstanceKey, Instance> wanted = new HashMap<>();
      for (int n = 0; n < instances.size(); n++) {
        Registration old = registrations.get(instances.get(n).key());
        if (old != null) {
          checkReplaceable(old, claim, instances.get(n).key(), "instances[" + n + "]");
        }
      }
      for (Instance i : instances) {
        Registration old = registrations.get(i.key());
        // Held by a newer session of the same client: left to it.
        if (old == null || old.owner.equals(owner) || !old.claim.newerThan(claim)) {
          wanted.put(i.key(), heldBack(old, i));
        }
      }
      // The whole batch is checked before anything changes.
      int moreInstances = 0;
      long moreBytes = 0;
      for (Registration r : registrations.values()) {
        if (r.owner.equals(owner) && !wanted.containsKey(r.instance.key())) {
          moreInstances--;
          moreBytes -= r.size;
        }
      }
      for (Instance i : wanted.values()) {
        Registration old = registrations.get(i.key());
        moreInstances += old == null ? 1 : 0;
        moreBytes += WireSize.ofInstanceInList(i) - (old == null ? 0 : old.size);
      }
      checkLimits(moreInstances, moreBytes, "instances");
      boolean changed = false;
      List<InstanceKey> dropped = new ArrayList<>();
      var it = registrations.entrySet().iterator();
      while (it.hasNext()) {
        var en = it.next();
        if (en.getValue().owner.equals(owner) && !wanted.containsKey(en.getKey())) {
          bytes -= en.getValue().size;
          it.remove();
          counted(owner, -1);
          holdEnded(en.getValue());
          dropped.add(en.getKey());
          changed = true;
        }
      }
      if (departure) {
        departed(dropped);
      }
      for (Instance i : wanted.values()) {
        changed |= store(owner, claim, i, WireSize.ofInstanceInList(i)); // checked above, as a whole
      }
      return changed;
    }
  }
}
