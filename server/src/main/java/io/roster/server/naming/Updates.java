package io.roster.server.naming;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Names;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Registry;
import io.roster.server.registry.ServiceSettings;
import java.util.HashMap;
import java.util.Map;

/**
 * UpdateInstance and UpdateService, whatever the transport: the field ranges, then the change
 * applied under the registry's lock for that service, metadata replaced or merged.
 *
 * <p>Thread-safe: it holds no state of its own; the registry serialises changes per service.
 */
public final class Updates {

  /**
   * What an UpdateInstance asks for; a null field is left as it is.
   *
   * @param metadata replaces the instance's metadata when {@code replaceMetadata}, else is merged into it
   */
  public record InstanceChange(Boolean enabled, Double weight, Boolean healthy, boolean replaceMetadata,
      Map<String, String> metadata) {}

  /**
   * What an UpdateService asks for; a null threshold is left as it is.
   *
   * @param metadata replaces the service's metadata when {@code replaceMetadata}, else is merged into it
   */
  public record ServiceChange(Double protectThreshold, boolean replaceMetadata, Map<String, String> metadata) {}

  private final Registry registry;

  public Updates(Registry registry) {
    this.registry = registry;
  }

  /**
   * Checks {@code change} and applies it to the instance {@code key} of {@code service}.
   *
   * @return the updated instance, or null when no such instance is registered
   * @throws RegistryException INVALID_ARGUMENT for a weight outside 0..10000 or bad metadata
   */
  public Instance instance(ServiceKey service, InstanceKey key, InstanceChange change) {
    if (change.weight() != null) {
      double weight = change.weight();
      if (!(weight >= 0 && weight <= Names.MAX_WEIGHT)) {
        throw RegistryException.invalid("weight", weight, "0..10000");
      }
    }
    Names.checkMetadata("metadata", change.metadata());
    return registry.update(service, key, i -> {
      Instance next = i;
      if (change.enabled() != null) {
        next = next.withEnabled(change.enabled());
      }
      if (change.weight() != null) {
        next = next.withWeight(change.weight());
      }
      if (change.healthy() != null) {
        next = next.withHealthy(change.healthy());
      }
      // Validated again as part of the instance: the merged total must fit too.
      return next.withMetadata(metadata(next.metadata(), change.replaceMetadata(), change.metadata()));
    });
  }

  /**
   * Checks {@code change} and applies it to the settings of {@code service}.
   *
   * @throws RegistryException INVALID_ARGUMENT for a threshold outside 0..1 or bad metadata
   */
  public void service(ServiceKey service, ServiceChange change) {
    if (change.protectThreshold() != null) {
      double threshold = change.protectThreshold();
      if (!(threshold >= 0 && threshold <= 1)) {
        throw RegistryException.invalid("protect_threshold", threshold, "0..1 (0 turns it off)");
      }
    }
    Names.checkMetadata("metadata", change.metadata());
    registry.updateSettings(service, s -> {
      ServiceSettings next = change.protectThreshold() != null ? s.withProtectThreshold(change.protectThreshold()) : s;
      return next.withMetadata(metadata(next.metadata(), change.replaceMetadata(), change.metadata()));
    });
  }

  /** The metadata an update asks for: {@code given} instead of {@code current}, or merged into it. */
  public static Map<String, String> metadata(Map<String, String> current, boolean replace,
      Map<String, String> given) {
    if (replace) {
      return given;
    }
    if (given.isEmpty()) {
      return current;
    }
    Map<String, String> merged = new HashMap<>(current);
    merged.putAll(given);
    return merged;
  }
}
