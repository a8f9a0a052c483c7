package io.roster.server.registry;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

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
 *
 * <p>The package's facade: changes and the owner index run in {@link Services}, a service's
 * state is a {@link ServiceEntry}; {@link Queries}, {@link Images}, {@link Holds} and {@link
 * Departures} have the reads, the image, the holds and the departures.
 */
public final class Registry {

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

  private final Services core;
  private final Queries queries;
  private final Images images;
  private final NamespaceBook namespaces;

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
    this.core = new Services(clockMicros, maxSettingsBytes, limits);
    this.queries = new Queries(core);
    this.namespaces = new NamespaceBook(queries);
    this.images = new Images(core, namespaces);
  }

  /**
   * Starts or stops listing departures in states (see the class comment): on while the node
   * warms up, off (and forgotten) once it is warm. Turning it off drops the states kept for
   * reads, so that none is served with a list any more.
   */
  public void recordDepartures(boolean on) {
    core.recordDepartures(on);
  }

  /** Adds a listener of every change from now on (see {@link ChangeListener} for its contract). */
  public void addListener(ChangeListener listener) {
    core.addListener(listener);
  }

  /** Removes a listener added before; a no-op for one that was not. */
  public void removeListener(ChangeListener listener) {
    core.removeListener(listener);
  }

  /**
   * Counts {@code owner}'s instances in {@code tally} (and so in its wider tallies) from now
   * on. Call before the owner registers anything; {@link #removeOwner} forgets it.
   */
  public void attachOwner(Owner owner, Tally tally) {
    core.owners.put(owner, new Services.Holdings(Objects.requireNonNull(tally)));
  }

  /**
   * The services in which {@code owner} has at least one instance now (a copy; instances that
   * moved to another owner no longer count). Costs O(services of that owner).
   */
  public Set<ServiceKey> servicesOf(Owner owner) {
    return core.servicesOf(owner);
  }

  /**
   * The owners that {@code which} selects among those holding at least one instance (or
   * attached): costs O(owners). For the rare sweeps of the cluster (the owners of a member that
   * is down).
   */
  public List<Owner> owners(Predicate<Owner> which) {
    return queries.owners(which);
  }

  /** How many instances {@code owner} has, over every service: one read. */
  public int ownedCount(Owner owner) {
    return queries.ownedCount(owner);
  }

  /** How many instances {@code owner} has in {@code service}: one read under the service's lock. */
  public int ownedCount(Owner owner, ServiceKey service) {
    return queries.ownedCount(owner, service);
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
    return core.register(owner, claim, service, instance);
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
    return core.deregister(owner, claim, service, key);
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
    return core.update(service, key, change, hold);
  }

  /** The operator's settings of a service (defaults when never set). */
  public ServiceSettings settings(ServiceKey service) {
    return core.settings(service);
  }

  /**
   * Changes a service's settings. When the protect threshold changes and the service has
   * instances, it gets a new revision and a push (the visible state may change with it).
   * Settings outlive the service's instances: they are the operator's, not the providers'.
   */
  public ServiceSettings updateSettings(ServiceKey service, UnaryOperator<ServiceSettings> change) {
    return core.updateSettings(service, change);
  }

  /** Whether {@code owner} still owns the instance with this identity. */
  public boolean owns(Owner owner, ServiceKey service, InstanceKey key) {
    return queries.owns(owner, service, key);
  }

  /** The instance with this identity as stored (disabled ones too), or null when there is none. */
  public @Nullable Instance instance(ServiceKey service, InstanceKey key) {
    return queries.instance(service, key);
  }

  /** The claim of the instance {@code key} of {@code service} (who registered it); null when it is not registered. */
  public @Nullable Claim claimOf(ServiceKey service, InstanceKey key) {
    return queries.claimOf(service, key);
  }

  /** Who holds the instance {@code key} of {@code service}; null when it is not registered. */
  public @Nullable Owner ownerOf(ServiceKey service, InstanceKey key) {
    return queries.ownerOf(service, key);
  }

  /** Whether an operator holds the registered instance {@code key} of {@code service} out of traffic. */
  public boolean held(ServiceKey service, InstanceKey key) {
    return queries.held(service, key);
  }

  /** Sets who is told of holds ended by their instance leaving (one listener; null: none). */
  public void onHoldEnded(@Nullable HoldListener listener) {
    core.holds.listener(listener);
  }

  /**
   * Holds read back from disk at a standalone server's start, before it serves: the first
   * registration of each such instance is stored disabled and held, as if the instance had never
   * left, until {@link #endRestoredHolds} (the end of the warm-up, by which its owner had time to
   * come back).
   */
  public void restoreHolds(Map<ServiceKey, Set<InstanceKey>> holds) {
    core.holds.restore(holds);
  }

  /**
   * The restored holds whose instances did not come back: they end now, as the hold of an
   * instance that left the registry does. Returns them, by service.
   */
  public Map<ServiceKey, Set<InstanceKey>> endRestoredHolds() {
    return core.holds.endRestored(this::held);
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
    return core.replaceOwned(owner, claim, service, instances);
  }

  /**
   * Removes every instance {@code owner} has in {@code service} (a drain). Returns the revision
   * from which the service no longer shows them: the revision of this change, or the current
   * one when there was nothing to remove. Any state pushed afterwards has at least this
   * revision (an absent service is pushed at the absent revision, which is never older).
   */
  public long removeOwned(Owner owner, ServiceKey service) {
    return core.removeOwned(owner, service);
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
    core.removeOwner(owner, departure);
  }

  /** What this registry has taken in and let go, for the server's metrics. */
  public RegistryCounters counters() {
    return core.counters;
  }

  /** The current visible state; an empty state at {@link #absentRevision()} if unknown. */
  public ServiceSnapshot snapshot(ServiceKey service) {
    return core.snapshot(service);
  }

  /** The limits every service is held to. */
  public ServiceLimits limits() {
    return core.limits;
  }

  /** Counters of one service, or null when it does not exist. */
  public @Nullable ServiceStats stats(ServiceKey service) {
    return queries.stats(service);
  }

  /** One page of the services of a namespace (and group, when non-empty), sorted. */
  public ServicePage listServices(String namespace, String group, int pageNo, int pageSize) {
    return listServices(namespace, group, k -> true, pageNo, pageSize);
  }

  /**
   * One page of the services of a namespace (and group, when non-empty) that {@code which}
   * selects, sorted; the total counts those it selects.
   */
  public ServicePage listServices(String namespace, String group, Predicate<ServiceKey> which,
      int pageNo, int pageSize) {
    return queries.listServices(namespace, group, which, pageNo, pageSize);
  }

  /** Every namespace that has a service, in order, with its services and its instances by owner kind. */
  @SuppressWarnings("EnumOrdinal") // an index into the counts built here
  public List<NamespaceKinds> namespaceKinds() {
    return queries.namespaceKinds();
  }

  /** The namespaces: created ones, and each with its counts (decision 97). */
  public NamespaceBook namespaceBook() {
    return namespaces;
  }

  /** Estimated bytes all services' settings take (see {@link ServiceSettings#footprint}). */
  public long settingsBytes() {
    return core.settingsBytes.get();
  }

  /** How many services exist (have at least one instance). */
  public int serviceCount() {
    return core.entries.size();
  }

  /**
   * An image of the whole registry, services in key order. Consistent only while nothing
   * changes it: a cluster member takes it on the thread that applies the log.
   */
  public Image image() {
    return images.image();
  }

  /**
   * One service as values: its revision and every registration, disabled and held ones too,
   * in instance order; null when it does not exist.
   */
  public @Nullable ServiceImage serviceImage(ServiceKey key) {
    return images.serviceImage(key);
  }

  /**
   * Replaces everything with {@code image} (a cluster member that loads a snapshot), keeping
   * owners' tallies exact, and reports every service that existed before or after as one
   * {@link Change.Kind#RESTORED} change. Must not run concurrently with any other change.
   */
  public void restore(Image image) {
    images.restore(image);
  }

  /** Revision reported for services that do not exist. */
  public long absentRevision() {
    return core.absentRevision;
  }

  /** The first revision of this registry: nothing it reports is older. */
  public long bootRevision() {
    return core.bootRevision;
  }

  /** Counters of one service; {@code bytes} is the wire size of its instances (see {@link ServiceLimits}). */
  public record ServiceStats(int instanceCount, int healthyCount, long revision, long bytes) {}

  /** One page of service keys and how many there are in total. */
  public record ServicePage(int total, List<ServiceKey> services) {}

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
      Map<ServiceKey, ServiceSettings> settings, List<Namespace> namespaces) {}
}
