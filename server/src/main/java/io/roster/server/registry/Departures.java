package io.roster.server.registry;

import io.roster.server.model.InstanceKey;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The departures a warming node lists in its states (see {@link Registry#recordDepartures}): per
 * service, the identities that left it through a departure this node saw and have not been
 * registered since.
 *
 * <p>Each set is immutable and replaced under its service's lock (a service's entries follow one
 * another: the next is created only once the last has left the map), so readers need no lock.
 */
final class Departures {

  /** Per service, what left it; null when not recording. */
  private volatile @Nullable Map<ServiceKey, Set<InstanceKey>> departures;

  /** Starts (empty) or stops (and forgets) recording. */
  void record(boolean on) {
    departures = on ? new ConcurrentHashMap<>() : null;
  }

  /** What a state of {@code service} lists as departed: null when not recording. */
  @Nullable Set<InstanceKey> of(ServiceKey service) {
    Map<ServiceKey, Set<InstanceKey>> d = departures;
    return d == null ? null : d.getOrDefault(service, Set.of());
  }

  /** The registration of {@code key} is back: it is no longer listed as departed. Under the service's lock. */
  void returned(ServiceKey service, InstanceKey key) {
    Map<ServiceKey, Set<InstanceKey>> d = departures;
    Set<InstanceKey> gone = d == null ? null : d.get(service);
    if (d != null && gone != null && gone.contains(key)) {
      Set<InstanceKey> rest = new HashSet<>(gone);
      rest.remove(key);
      if (rest.isEmpty()) {
        d.remove(service);
      } else {
        d.put(service, Set.copyOf(rest));
      }
    }
  }

  /**
   * {@code keys} left {@code service} through a departure seen here: listed, up to the bound,
   * while recording. Under the service's lock.
   */
  void departed(ServiceKey service, Collection<InstanceKey> keys) {
    Map<ServiceKey, Set<InstanceKey>> d = departures;
    if (d == null || keys.isEmpty()) {
      return;
    }
    Set<InstanceKey> gone = d.getOrDefault(service, Set.of());
    if (gone.size() >= ServiceSnapshot.MAX_DEPARTED) {
      return;
    }
    Set<InstanceKey> more = new HashSet<>(gone);
    for (InstanceKey k : keys) {
      if (more.size() == ServiceSnapshot.MAX_DEPARTED) {
        break;
      }
      more.add(k);
    }
    d.put(service, Set.copyOf(more));
  }

  /**
   * The registry was replaced by {@code image}: what was seen leaving stays listed unless the
   * image has it again. A no-op when not recording.
   */
  void keepAfter(Registry.Image image) {
    Map<ServiceKey, Set<InstanceKey>> seen = departures;
    if (seen == null) {
      return;
    }
    Map<ServiceKey, Set<InstanceKey>> kept = new ConcurrentHashMap<>();
    Map<ServiceKey, Registry.ServiceImage> byKey = new HashMap<>();
    image.services().forEach(si -> byKey.put(si.service(), si));
    seen.forEach((k, gone) -> {
      Set<InstanceKey> rest = new HashSet<>(gone);
      Registry.ServiceImage si = byKey.get(k);
      if (si != null) {
        si.registrations().forEach(h -> rest.remove(h.instance().key()));
      }
      if (!rest.isEmpty()) {
        kept.put(k, Set.copyOf(rest));
      }
    });
    departures = kept;
  }
}
