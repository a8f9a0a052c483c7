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
 */
public record ServiceSettings(double protectThreshold, Map<String, String> metadata) {

  public static final ServiceSettings DEFAULT = new ServiceSettings(0, Map.of());

  public ServiceSettings {
    if (!(protectThreshold >= 0 && protectThreshold <= 1)) {
      throw RegistryException.invalid("protect_threshold", protectThreshold, "0..1 (0 turns it off)");
    }
    metadata = Map.copyOf(metadata);
    Names.checkMetadata("metadata", metadata);
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
    return 2 * chars + 256 + 96L * metadata.size();
  }

  public ServiceSettings withProtectThreshold(double value) {
    return new ServiceSettings(value, metadata);
  }

  public ServiceSettings withMetadata(Map<String, String> value) {
    return new ServiceSettings(protectThreshold, value);
  }
}
