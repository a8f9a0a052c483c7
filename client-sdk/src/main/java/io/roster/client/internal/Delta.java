package io.roster.client.internal;

import io.roster.client.Instance;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A delta push of one service (docs/protocol.md, "Delta pushes"), as {@link ProtoMapper} reads
 * it: what changed from the state at {@code baseRevision}. {@link DeltaApplier} applies it.
 * Immutable.
 *
 * @param key the service
 * @param baseRevision the revision of the state it applies to
 * @param revision the revision of the result
 * @param checksum the server's checksum of the result
 * @param protectThresholdReached the result's protect flag
 * @param upserted instances added or changed, in the server's order
 * @param removed identities removed, in the server's order
 * @param departed identities a warming server saw leave
 * @param invalid why an upserted instance could not be read (the delta is then not applied), or null
 */
record Delta(ServiceKey key, long baseRevision, long revision, String checksum, boolean protectThresholdReached,
    List<Instance> upserted, List<InstancesDiff.Identity> removed, Set<InstancesDiff.Identity> departed,
    @Nullable String invalid) {

  Delta {
    upserted = List.copyOf(upserted);
    removed = List.copyOf(removed);
    departed = Set.copyOf(departed);
  }
}
