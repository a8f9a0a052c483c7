package io.roster.server.registry;

import io.roster.server.model.Names;
import io.roster.server.model.RegistryException;
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

  public ServiceSettings withProtectThreshold(double value) {
    return new ServiceSettings(value, metadata);
  }

  public ServiceSettings withMetadata(Map<String, String> value) {
    return new ServiceSettings(protectThreshold, value);
  }
}
