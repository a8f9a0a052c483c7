package io.roster.client.internal;

import io.roster.client.Instance;
import java.util.List;

/**
 * The state of one service at one revision, as the client caches it.
 *
 * @param key the service
 * @param instances the visible instances; unmodifiable
 * @param revision the server's revision; the cache only moves forward
 * @param checksum the server's checksum of the content, sent back when polling
 */
record ServiceSnapshot(ServiceKey key, List<Instance> instances, long revision, String checksum) {

  ServiceSnapshot {
    instances = List.copyOf(instances);
  }
}
