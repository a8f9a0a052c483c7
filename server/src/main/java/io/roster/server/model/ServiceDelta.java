package io.roster.server.model;

import java.util.ArrayList;
import java.util.List;

/**
 * A service's visible state as a change against an earlier state of the same view: what a
 * delta push carries. Applying it to the base gives exactly the target state.
 *
 * @param base the state it applies to (only its revision goes on the wire)
 * @param target the new state (revision, checksum and protect flag go on the wire)
 * @param upserted instances of {@code target} that are new or differ from {@code base}, sorted
 * @param removed identities in {@code base} that {@code target} no longer has, sorted
 */
public record ServiceDelta(ServiceSnapshot base, ServiceSnapshot target, List<Instance> upserted,
    List<InstanceKey> removed) {

  public ServiceDelta {
    upserted = List.copyOf(upserted);
    removed = List.copyOf(removed);
  }

  /**
   * The change from {@code base} to {@code target}, two views of one service through the same
   * filter. One merge over both sorted lists: linear in their sizes.
   */
  public static ServiceDelta between(ServiceSnapshot base, ServiceSnapshot target) {
    List<Instance> from = base.instances();
    List<Instance> to = target.instances();
    List<Instance> upserted = new ArrayList<>();
    List<InstanceKey> removed = new ArrayList<>();
    int i = 0;
    int j = 0;
    while (i < from.size() || j < to.size()) {
      int c = i == from.size() ? 1 : j == to.size() ? -1 : Instance.ORDER.compare(from.get(i), to.get(j));
      if (c < 0) {
        removed.add(from.get(i++).key());
      } else if (c > 0) {
        upserted.add(to.get(j++));
      } else {
        Instance now = to.get(j++);
        if (!now.equals(from.get(i++))) {
          upserted.add(now);
        }
      }
    }
    return new ServiceDelta(base, target, upserted, removed);
  }

  /** Entries the delta carries (upserted instances and removed identities). */
  public int size() {
    return upserted.size() + removed.size();
  }

  /**
   * The instances of applying this delta to {@code instances} (sorted, as in a snapshot): what
   * a client does. The server uses it only in tests.
   */
  public List<Instance> applyTo(List<Instance> instances) {
    List<Instance> out = new ArrayList<>(instances.size() + upserted.size());
    int u = 0;
    int r = 0;
    for (Instance old : instances) {
      InstanceKey k = old.key();
      while (u < upserted.size() && upserted.get(u).key().compareTo(k) < 0) {
        out.add(upserted.get(u++));
      }
      while (r < removed.size() && removed.get(r).compareTo(k) < 0) {
        r++;
      }
      boolean gone = r < removed.size() && removed.get(r).equals(k);
      boolean replaced = u < upserted.size() && upserted.get(u).key().equals(k);
      if (replaced) {
        out.add(upserted.get(u++));
      } else if (!gone) {
        out.add(old);
      }
    }
    while (u < upserted.size()) {
      out.add(upserted.get(u++));
    }
    return out;
  }
}
