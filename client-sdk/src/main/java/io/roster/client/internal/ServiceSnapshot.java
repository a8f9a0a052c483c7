package io.roster.client.internal;

import io.roster.client.Instance;
import java.util.List;
import java.util.Set;

/**
 * The state of one service at one revision, as the client caches it.
 *
 * @param key the service
 * @param instances the visible instances; unmodifiable
 * @param revision the server's revision; the cache only moves forward
 * @param checksum the server's checksum of the content, sent back when polling
 * @param protectThresholdReached the service's protect threshold is reached: unhealthy
 *     instances are in the list and selection spreads load over all of them
 * @param departed identities a warming server saw leave (its states list them while it warms
 *     up): lacking from the list, they are removed at once rather than held ({@link ShrinkHold})
 */
record ServiceSnapshot(ServiceKey key, List<Instance> instances, long revision, String checksum,
    boolean protectThresholdReached, Set<InstancesDiff.Identity> departed) {

  ServiceSnapshot {
    instances = List.copyOf(instances);
    departed = Set.copyOf(departed);
  }

  ServiceSnapshot(ServiceKey key, List<Instance> instances, long revision, String checksum,
      boolean protectThresholdReached) {
    this(key, instances, revision, checksum, protectThresholdReached, Set.of());
  }

  ServiceSnapshot(ServiceKey key, List<Instance> instances, long revision, String checksum) {
    this(key, instances, revision, checksum, false);
  }
}
