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
import org.jspecify.annotations.Nullable;

/**
 * One service's mutable state: its registrations, its instances per owner, its wire bytes and
 * its revision, guarded by its own monitor. Every change to a service runs here, under that
 * monitor, through {@link Services#mutateAt}; what a change does to the owner index, the holds
 * and the departures goes to {@link Services}, {@link Holds} and {@link Departures}.
 */
final class ServiceEntry {
  final ServiceKey service;
  private final Services core;
  final Map<InstanceKey, Registration> registrations = new HashMap<>();
  /** Instances per owner in this service (an int[1] each, to count in place). */
  final Map<Owner, int[]> byOwner = new HashMap<>(4);
  /** Sum of the registrations' sizes. */
  long bytes;
  long revision;
  volatile @Nullable ServiceSnapshot snapshot;
  boolean removed;

  ServiceEntry(ServiceKey service, Services core) {
    this.service = service;
    this.core = core;
  }

  List<Instance> instances() {
    List<Instance> list = new ArrayList<>(registrations.size());
    for (Registration r : registrations.values()) {
      list.add(r.instance());
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
      if (!old.owner().equals(owner) && old.claim().newerThan(claim)) {
        return false;
      }
    }
    instance = heldBack(old, instance);
    int size = WireSize.ofInstanceInList(instance);
    checkLimits(old == null ? 1 : 0, size - (old == null ? 0 : old.size()), field);
    return store(owner, claim, instance, size, Cause.REQUEST);
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
      if (r.instance().ephemeral() != instance.ephemeral()) {
        throw new RegistryException(RegistryException.Kind.FAILED_PRECONDITION, "ephemeral", "service " + service
            + " has " + kind(r.instance()) + " instances, and a service is either ephemeral or persistent: "
            + "deregister its " + kind(r.instance()) + " instances before registering " + kind(instance) + " ones, "
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
    boolean held = old != null ? old.held() : restoredHold(instance.key(), false);
    return held ? instance.withEnabled(false) : instance;
  }

  /** Whether a hold restored from disk waits for {@code key}; {@code take} ends the wait. */
  private boolean restoredHold(InstanceKey key, boolean take) {
    return core.holds.restored(service, key, take);
  }

  /** A held registration left: its hold ends with it. */
  private void holdEnded(Registration r) {
    if (r.held()) {
      core.holds.ended(service, r.instance().key());
    }
  }

  /** Sets whether an operator holds the registration of {@code key} (if there is one). */
  void hold(InstanceKey key, boolean held) {
    Registration r = registrations.get(key);
    if (r != null && r.held() != held) {
      registrations.put(key, new Registration(r.owner(), r.instance(), r.size(), r.claim(), held));
    }
  }

  /**
   * Refuses (PERMISSION_DENIED, nothing changed) when another identity registered {@code key}
   * and {@code claim}'s is not an admin (decision 65).
   */
  private void checkReplaceable(Registration old, Claim claim, InstanceKey key, String field) {
    if (!old.claim().replaceableBy(claim)) {
      throw new RegistryException(RegistryException.Kind.PERMISSION_DENIED, field, "instance " + key
          + " is registered by \"" + old.claim().identity() + "\": only that identity or an admin may replace it");
    }
  }

  /**
   * Stores without checking limits, keeping an operator's hold; returns whether the visible
   * instance changed. {@code cause} is what the counters count it as.
   */
  boolean store(Owner owner, Claim claim, Instance instance, int size, Cause cause) {
    claim = claim.stored();
    Registration before = registrations.get(instance.key());
    if (before == null) {
      returned(instance.key());
    }
    boolean held = before != null ? before.held() : restoredHold(instance.key(), true);
    Registration old = registrations.put(instance.key(), new Registration(owner, instance, size, claim, held));
    bytes += size - (old == null ? 0 : old.size());
    if (old == null) {
      counted(owner, 1, cause);
    } else if (!old.owner().equals(owner)) {
      counted(old.owner(), -1, cause);
      counted(owner, 1, cause);
    }
    return old == null || !old.instance().equals(instance);
  }

  /**
   * Throws RESOURCE_EXHAUSTED when the service would cross a limit after adding {@code
   * moreInstances} and {@code moreBytes} (either may be negative).
   */
  void checkLimits(int moreInstances, long moreBytes, String field) {
    int count = registrations.size() + moreInstances;
    ServiceLimits limits = core.limits;
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

  /**
   * Removes the registration of {@code key} if {@code owner} holds it, refusing when {@code
   * claim} (if any) may not remove what another identity registered; counted as {@code cause}.
   */
  boolean removeIfOwned(Owner owner, @Nullable Claim claim, InstanceKey key, Cause cause) {
    Registration r = registrations.get(key);
    if (r == null || !r.owner().equals(owner)) {
      return false;
    }
    if (claim != null && !r.claim().replaceableBy(claim)) {
      throw new RegistryException(RegistryException.Kind.PERMISSION_DENIED, "", "instance " + key
          + " is registered by \"" + r.claim().identity() + "\": only that identity or an admin may deregister it");
    }
    registrations.remove(key);
    counted(owner, -1, cause);
    bytes -= r.size();
    holdEnded(r);
    return true;
  }

  /** Keeps the per-owner counts of this entry and the owner's tally in step. */
  private void counted(Owner owner, int delta, Cause cause) {
    int[] n = byOwner.computeIfAbsent(owner, k -> new int[1]);
    n[0] += delta;
    if (n[0] == 0) {
      byOwner.remove(owner);
    }
    core.count(owner, service, delta, n[0], cause);
  }

  /** The registration of {@code key} is back: it is no longer listed as departed. */
  private void returned(InstanceKey key) {
    core.departures.returned(service, key);
  }

  /** {@code keys} left through a departure seen here: listed, up to the bound, while recording. */
  void departed(Collection<InstanceKey> keys) {
    core.departures.departed(service, keys);
  }

  /**
   * Makes {@code instances} the complete set {@code owner} has here, checked as a whole first.
   *
   * @param departure whether what this drops left through a departure seen here (see {@link
   *     #departed})
   * @param cause what the counters count the changes as
   */
  boolean replaceOwned(Owner owner, Claim claim, List<Instance> instances, boolean departure, Cause cause) {
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
      if (old == null || old.owner().equals(owner) || !old.claim().newerThan(claim)) {
        wanted.put(i.key(), heldBack(old, i));
      }
    }
    // The whole batch is checked before anything changes.
    int moreInstances = 0;
    long moreBytes = 0;
    for (Registration r : registrations.values()) {
      if (r.owner().equals(owner) && !wanted.containsKey(r.instance().key())) {
        moreInstances--;
        moreBytes -= r.size();
      }
    }
    for (Instance i : wanted.values()) {
      Registration old = registrations.get(i.key());
      moreInstances += old == null ? 1 : 0;
      moreBytes += WireSize.ofInstanceInList(i) - (old == null ? 0 : old.size());
    }
    checkLimits(moreInstances, moreBytes, "instances");
    boolean changed = false;
    List<InstanceKey> dropped = new ArrayList<>();
    var it = registrations.entrySet().iterator();
    while (it.hasNext()) {
      var en = it.next();
      if (en.getValue().owner().equals(owner) && !wanted.containsKey(en.getKey())) {
        bytes -= en.getValue().size();
        it.remove();
        counted(owner, -1, cause);
        holdEnded(en.getValue());
        dropped.add(en.getKey());
        changed = true;
      }
    }
    if (departure) {
      departed(dropped);
    }
    for (Instance i : wanted.values()) {
      changed |= store(owner, claim, i, WireSize.ofInstanceInList(i), cause); // checked above, as a whole
    }
    return changed;
  }
}
