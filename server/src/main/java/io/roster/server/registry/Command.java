package io.roster.server.registry;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One change to the registry as a value: what a {@link Writer} applies directly (standalone) or
 * after the cluster's log has committed it, with the same result on every node (docs/cluster.md, "One log"; decision 25).
 *
 * <p>A command holds only data (no lambdas), so that it can be written to a log, and applying
 * it depends only on the registry's state and the command: applied in the same order from the
 * same state, the same commands give the same registry everywhere.
 *
 * @param <R> what applying it returns
 */
public sealed interface Command<R> {

  /** Applies this command to {@code registry} and returns its result (null: none, or nothing to update). */
  @Nullable R applyTo(Registry registry);

  /** {@link Registry#register}: the instance as stored. */
  record Register(Owner owner, ServiceKey service, Instance instance, Claim claim) implements Command<Instance> {
    public Register {
      Objects.requireNonNull(owner);
      Objects.requireNonNull(service);
      Objects.requireNonNull(instance);
      Objects.requireNonNull(claim);
    }

    /** Unclaimed. */
    public Register(Owner owner, ServiceKey service, Instance instance) {
      this(owner, service, instance, Claim.NONE);
    }

    @Override
    public Instance applyTo(Registry registry) {
      return registry.register(owner, claim, service, instance);
    }
  }

  /**
   * {@link Registry#deregister}: whether the owner had it.
   *
   * @param claim who removes a persistent instance ({@link Owner#PERSISTENT}), checked against who
   *     registered it; null for the other owners, which remove only what they hold
   */
  record Deregister(Owner owner, ServiceKey service, InstanceKey key, @Nullable Claim claim)
      implements Command<Boolean> {
    /** Without an identity check (an owner removing what it holds). */
    public Deregister(Owner owner, ServiceKey service, InstanceKey key) {
      this(owner, service, key, null);
    }

    @Override
    public Boolean applyTo(Registry registry) {
      return registry.deregister(owner, claim, service, key);
    }
  }

  /** {@link Registry#replaceOwned}: the instances as stored. */
  record ReplaceOwned(Owner owner, ServiceKey service, List<Instance> instances, Claim claim)
      implements Command<List<Instance>> {
    public ReplaceOwned {
      instances = List.copyOf(instances);
      Objects.requireNonNull(claim);
    }

    /** Unclaimed. */
    public ReplaceOwned(Owner owner, ServiceKey service, List<Instance> instances) {
      this(owner, service, instances, Claim.NONE);
    }

    @Override
    public List<Instance> applyTo(Registry registry) {
      return registry.replaceOwned(owner, claim, service, instances);
    }
  }

  /** {@link Registry#removeOwned}: the revision from which the service no longer shows them. */
  record RemoveOwned(Owner owner, ServiceKey service) implements Command<Long> {
    @Override
    public Long applyTo(Registry registry) {
      return registry.removeOwned(owner, service);
    }
  }

  /** {@link Registry#removeOwner}: the end of an owner. */
  record RemoveOwner(Owner owner) implements Command<Void> {
    @Override
    public Void applyTo(Registry registry) {
      registry.removeOwner(owner);
      return null;
    }
  }

  /**
   * An operator's change of an instance, whoever owns it; a null field is left as it is. The
   * result is the instance as stored, or null when there is no such instance.
   *
   * @param metadata replaces the instance's metadata when {@code replaceMetadata}, else is merged into it
   * @param hold {@code enabled = false} is an operator's hold: the instance stays disabled
   *     whoever registers it again, until an update enables it or it leaves the registry
   *     (decision 40); without it, the next registration of the instance decides. Any {@code
   *     enabled = true} ends a hold.
   */
  record UpdateInstance(ServiceKey service, InstanceKey key, @Nullable Boolean enabled, @Nullable Double weight,
      @Nullable Boolean healthy, boolean replaceMetadata, Map<String, String> metadata, boolean hold)
      implements Command<Instance> {
    public UpdateInstance {
      metadata = Map.copyOf(metadata);
    }

    /** Without a hold. */
    public UpdateInstance(ServiceKey service, InstanceKey key, @Nullable Boolean enabled, @Nullable Double weight,
        @Nullable Boolean healthy, boolean replaceMetadata, Map<String, String> metadata) {
      this(service, key, enabled, weight, healthy, replaceMetadata, metadata, false);
    }

    /** Only {@code enabled}: in or out of traffic. */
    public static UpdateInstance enabled(ServiceKey service, InstanceKey key, boolean enabled) {
      return new UpdateInstance(service, key, enabled, null, null, false, Map.of());
    }

    @Override
    public @Nullable Instance applyTo(Registry registry) {
      return registry.update(service, key, i -> {
        Instance next = i;
        if (enabled != null) {
          next = next.withEnabled(enabled);
        }
        if (weight != null) {
          next = next.withWeight(weight);
        }
        if (healthy != null) {
          next = next.withHealthy(healthy);
        }
        // Validated again as part of the instance: the merged total must fit too.
        return next.withMetadata(merge(next.metadata(), replaceMetadata, metadata));
      }, enabled == null ? null : enabled ? Boolean.FALSE : hold ? Boolean.TRUE : null);
    }
  }

  /**
   * An operator's change of a service's settings; a null threshold is left as it is. The result
   * is the settings as they are now.
   *
   * @param metadata replaces the service's metadata when {@code replaceMetadata}, else is merged into it
   * @param checks health checks set for these clusters; other clusters keep theirs
   */
  record UpdateSettings(ServiceKey service, @Nullable Double protectThreshold, boolean replaceMetadata,
      Map<String, String> metadata, Map<String, HealthCheck> checks) implements Command<ServiceSettings> {
    public UpdateSettings {
      metadata = Map.copyOf(metadata);
      checks = Map.copyOf(checks);
    }

    /** Without checks. */
    public UpdateSettings(ServiceKey service, @Nullable Double protectThreshold, boolean replaceMetadata,
        Map<String, String> metadata) {
      this(service, protectThreshold, replaceMetadata, metadata, Map.of());
    }

    @Override
    public ServiceSettings applyTo(Registry registry) {
      return registry.updateSettings(service, s -> {
        ServiceSettings next = protectThreshold != null ? s.withProtectThreshold(protectThreshold) : s;
        return next.withMetadata(merge(next.metadata(), replaceMetadata, metadata)).withChecks(checks);
      });
    }
  }

  /**
   * An operator creates ({@code create}) or edits a namespace (decision 97); the result is the
   * namespace as stored. Checked as it is applied, so that every member refuses the same.
   */
  record PutNamespace(Namespace namespace, boolean create) implements Command<Namespace> {
    public PutNamespace {
      Objects.requireNonNull(namespace);
    }

    @Override
    public Namespace applyTo(Registry registry) {
      return registry.namespaceBook().put(namespace, create);
    }
  }

  /**
   * An operator deletes an empty created namespace (decision 97); the result is the namespace as
   * it was. Whether it is empty is checked as it is applied, on every member alike.
   */
  record DeleteNamespace(String id) implements Command<Namespace> {
    public DeleteNamespace {
      Objects.requireNonNull(id);
    }

    @Override
    public Namespace applyTo(Registry registry) {
      return registry.namespaceBook().delete(id);
    }
  }

  /** The metadata an update asks for: {@code given} instead of {@code current}, or merged into it. */
  static Map<String, String> merge(Map<String, String> current, boolean replace, Map<String, String> given) {
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
