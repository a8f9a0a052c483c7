package io.roster.server.registry;

import io.roster.server.model.Names;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import java.util.Map;

/**
 * What an operator sets on a service, as opposed to what providers register.
 *
 * @param protectThreshold 0..1, 0 = off: see {@link io.roster.server.model.ServiceSnapshot#of}
 * @param metadata free-form labels, with the limits of instance metadata
 * @param checks how each cluster's persistent instances are probed, by cluster name; a cluster
 *     not listed gets {@link HealthCheck#DEFAULT}, which is never listed
 */
public record ServiceSettings(double protectThreshold, Map<String, String> metadata, Map<String, HealthCheck> checks) {

  public static final ServiceSettings DEFAULT = new ServiceSettings(0, Map.of(), Map.of());

  /** At most this many clusters of a service have a check of their own. */
  public static final int MAX_CHECKS = 64;

  public ServiceSettings {
    if (!(protectThreshold >= 0 && protectThreshold <= 1)) {
      throw RegistryException.invalid("protect_threshold", protectThreshold, "0..1 (0 turns it off)");
    }
    metadata = Map.copyOf(metadata);
    Names.checkMetadata("metadata", metadata);
    Map<String, HealthCheck> kept = new java.util.HashMap<>();
    checks.forEach((cluster, check) -> {
      Names.cluster("health_check.cluster", cluster);
      if (!check.equals(HealthCheck.DEFAULT)) {
        kept.put(cluster, check);
      }
    });
    if (kept.size() > MAX_CHECKS) {
      throw RegistryException.invalid("health_checks", kept.size() + " clusters", "at most " + MAX_CHECKS);
    }
    checks = Map.copyOf(kept);
  }

  /** Without checks of their own. */
  public ServiceSettings(double protectThreshold, Map<String, String> metadata) {
    this(protectThreshold, metadata, Map.of());
  }

  /** How the persistent instances of {@code cluster} are probed. */
  public HealthCheck check(String cluster) {
    return checks.getOrDefault(cluster, HealthCheck.DEFAULT);
  }

  /**
   * What keeping these settings for {@code service} costs, roughly, in heap bytes: the key and
   * metadata strings (two bytes a char, as the worst case of compact strings) plus the maps'
   * and records' overhead. Used to bound what all settings may take together.
   */
  public long footprint(ServiceKey service) {
    long chars = (long) service.namespace().length() + service.group().length() + service.name().length();
    for (Map.Entry<String, String> e : metadata.entrySet()) {
      chars += e.getKey().length() + e.getValue().length();
    }
    long bytes = 2 * chars + 256 + 96L * metadata.size();
    for (Map.Entry<String, HealthCheck> e : checks.entrySet()) {
      bytes += 2L * e.getKey().length() + e.getValue().footprint();
    }
    return bytes;
  }

  public ServiceSettings withProtectThreshold(double value) {
    return new ServiceSettings(value, metadata, checks);
  }

  public ServiceSettings withMetadata(Map<String, String> value) {
    return new ServiceSettings(protectThreshold, value, checks);
  }

  /** These settings with {@code given} checks set for their clusters (a default check removes a cluster's own). */
  public ServiceSettings withChecks(Map<String, HealthCheck> given) {
    if (given.isEmpty()) {
      return this;
    }
    Map<String, HealthCheck> next = new java.util.HashMap<>(checks);
    next.putAll(given);
    return new ServiceSettings(protectThreshold, metadata, next);
  }
}
