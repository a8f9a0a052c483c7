package io.roster.server.registry;

import io.roster.server.model.InstanceKey;
import io.roster.server.model.ServiceKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiPredicate;
import org.jspecify.annotations.Nullable;

/**
 * Operator holds beyond the registrations that carry them (docs/decisions.md, record 40): the
 * holds read back from disk at a standalone server's start whose instances have not been
 * registered again since, and who is told when a hold ends because its instance left.
 *
 * <p>Each restored set is changed under its service's lock; {@code anyRestored} keeps the look-up
 * off the path of every registration once none is left.
 */
final class Holds {

  private final Map<ServiceKey, Set<InstanceKey>> restored = new ConcurrentHashMap<>();
  private volatile boolean anyRestored;
  private volatile @Nullable HoldListener listener;

  /** Sets who is told of holds ended by their instance leaving (null: none). */
  void listener(@Nullable HoldListener l) {
    listener = l;
  }

  /** A held registration of {@code key} left {@code service}: its hold ends. Under the service's lock. */
  void ended(ServiceKey service, InstanceKey key) {
    HoldListener l = listener;
    if (l != null) {
      l.holdEnded(service, key);
    }
  }

  /** Whether a hold restored from disk waits for {@code key}; {@code take} ends the wait. */
  boolean restored(ServiceKey service, InstanceKey key, boolean take) {
    if (!anyRestored) {
      return false;
    }
    Set<InstanceKey> keys = restored.get(service);
    return keys != null && (take ? keys.remove(key) : keys.contains(key));
  }

  /** See {@link Registry#restoreHolds}. */
  void restore(Map<ServiceKey, Set<InstanceKey>> holds) {
    holds.forEach((service, keys) -> {
      Set<InstanceKey> set = ConcurrentHashMap.newKeySet();
      set.addAll(keys);
      restored.merge(service, set, (a, b) -> {
        a.addAll(b);
        return a;
      });
    });
    anyRestored = !restored.isEmpty();
  }

  /**
   * See {@link Registry#endRestoredHolds}; {@code held} tells whether a registration took the
   * hold meanwhile.
   */
  Map<ServiceKey, Set<InstanceKey>> endRestored(BiPredicate<ServiceKey, InstanceKey> held) {
    Map<ServiceKey, Set<InstanceKey>> ended = new HashMap<>();
    for (ServiceKey service : new ArrayList<>(restored.keySet())) {
      Set<InstanceKey> left = restored.remove(service);
      if (left == null) {
        continue;
      }
      // A registration under way may have taken its hold from the set just removed.
      Set<InstanceKey> gone = new HashSet<>();
      for (InstanceKey key : left) {
        if (!held.test(service, key)) {
          gone.add(key);
        }
      }
      if (!gone.isEmpty()) {
        ended.put(service, Set.copyOf(gone));
      }
    }
    anyRestored = !restored.isEmpty();
    return ended;
  }
}
