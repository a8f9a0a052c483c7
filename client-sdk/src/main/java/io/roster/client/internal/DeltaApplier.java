package io.roster.client.internal;

import io.roster.client.Instance;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Applies a delta push ({@link Delta}; docs/protocol.md, "Delta pushes") to the state of its
 * service at the delta's base revision, which the subscription keeps among its last few states ({@link Subscription#base}).
 * The result only counts when its checksum is the server's and it is newer than the cache;
 * anything else asks the server for the full state (an ack with {@code resync}). Stateless.
 */
final class DeltaApplier {

  /** The server's order of instances: ip, port, cluster, each as {@code String.compareTo}. */
  private static final Comparator<InstancesDiff.Identity> ORDER =
      Comparator.comparing(InstancesDiff.Identity::ip)
          .thenComparingInt(InstancesDiff.Identity::port)
          .thenComparing(InstancesDiff.Identity::cluster);

  /** What became of a delta. */
  sealed interface Outcome {}

  /** The delta gave this state, verified. */
  record Applied(ServiceSnapshot snapshot) implements Outcome {}

  /** The cache already holds this revision or a later one: nothing to do but ack. */
  record Stale() implements Outcome {}

  /** The cache is not at the base, or the result is not the server's: ask for the full state. */
  record Resync(String why) implements Outcome {}

  private DeltaApplier() {}

  /**
   * @param cached the server's state at the delta's base revision, as this client applied it,
   *     or null when it has no such state
   * @param cachedRevision the cached revision, or null when nothing is cached
   */
  static Outcome apply(@Nullable ServiceSnapshot cached, @Nullable Long cachedRevision, Delta delta) {
    if (cachedRevision != null && Long.compareUnsigned(delta.revision(), cachedRevision) <= 0) {
      return new Stale();
    }
    if (cached == null || cached.revision() != delta.baseRevision()) {
      return new Resync("no state at the delta's base revision " + Long.toUnsignedString(delta.baseRevision())
          + " (cache at " + (cachedRevision == null ? "none" : Long.toUnsignedString(cachedRevision)) + ")");
    }
    if (delta.invalid() != null) {
      return new Resync("an invalid instance: " + delta.invalid());
    }
    List<Instance> result = merge(cached.instances(), delta.upserted(), delta.removed());
    ServiceKey key = cached.key();
    String checksum = Checksums.of(key, result, delta.protectThresholdReached());
    if (!checksum.equals(delta.checksum())) {
      return new Resync("the result's checksum " + checksum + " is not the server's " + delta.checksum());
    }
    return new Applied(new ServiceSnapshot(key, result, delta.revision(), delta.checksum(),
        delta.protectThresholdReached(), delta.departed()));
  }

  /** One pass over the sorted lists: linear in their sizes. */
  private static List<Instance> merge(List<Instance> base, List<Instance> upserted,
      List<InstancesDiff.Identity> removed) {
    List<Instance> out = new ArrayList<>(base.size() + upserted.size());
    int u = 0;
    int r = 0;
    for (Instance old : base) {
      InstancesDiff.Identity k = InstancesDiff.Identity.of(old);
      while (u < upserted.size() && ORDER.compare(InstancesDiff.Identity.of(upserted.get(u)), k) < 0) {
        out.add(upserted.get(u++));
      }
      while (r < removed.size() && ORDER.compare(removed.get(r), k) < 0) {
        r++;
      }
      if (u < upserted.size() && InstancesDiff.Identity.of(upserted.get(u)).equals(k)) {
        out.add(upserted.get(u++));
      } else if (r >= removed.size() || !removed.get(r).equals(k)) {
        out.add(old);
      }
    }
    while (u < upserted.size()) {
      out.add(upserted.get(u++));
    }
    return out;
  }
}
