package io.roster.server.naming;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Names;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Command;
import io.roster.server.probe.ProbePolicy;
import io.roster.server.registry.HealthCheck;
import io.roster.server.registry.Registry;
import io.roster.server.registry.ServiceSettings;
import io.roster.server.registry.Writer;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * UpdateInstance and UpdateService, whatever the transport: the field ranges, then the change
 * submitted as a {@link Command} (applied under the registry's lock for that service, metadata
 * replaced or merged).
 *
 * <p>Thread-safe: it holds no state of its own; the registry serialises changes per service.
 */
public final class Updates {

  /**
   * What an UpdateInstance asks for; a null field is left as it is.
   *
   * @param metadata replaces the instance's metadata when {@code replaceMetadata}, else is merged into it
   */
  public record InstanceChange(@Nullable Boolean enabled, @Nullable Double weight, @Nullable Boolean healthy,
      boolean replaceMetadata, Map<String, String> metadata) {

    /** What it asks, for an audit line: {@code enabled=false weight=2.0 metadata+=[zone]}. */
    public String describe() {
      return ((enabled == null ? "" : "enabled=" + enabled + " ") + (weight == null ? "" : "weight=" + weight + " ")
          + (healthy == null ? "" : "healthy=" + healthy + " ")
          + (metadata.isEmpty() && !replaceMetadata ? "" : (replaceMetadata ? "metadata:=" : "metadata+=")
              + new java.util.TreeSet<>(metadata.keySet()))).trim();
    }
  }

  /**
   * What an UpdateService asks for; a null threshold is left as it is.
   *
   * @param metadata replaces the service's metadata when {@code replaceMetadata}, else is merged into it
   * @param checks health checks to set, by cluster; other clusters keep theirs
   */
  public record ServiceChange(@Nullable Double protectThreshold, boolean replaceMetadata,
      Map<String, String> metadata, Map<String, HealthCheck> checks) {

    public ServiceChange {
      checks = Map.copyOf(checks);
    }

    /** Without health checks. */
    public ServiceChange(@Nullable Double protectThreshold, boolean replaceMetadata, Map<String, String> metadata) {
      this(protectThreshold, replaceMetadata, metadata, Map.of());
    }

    /** What it asks, for an audit line: {@code protect_threshold=0.5 metadata+=[owner] checks=[DEFAULT:HTTP]}. */
    public String describe() {
      StringBuilder b = new StringBuilder();
      new java.util.TreeMap<>(checks).forEach((c, h) -> b.append(b.length() == 0 ? "" : ",").append(c).append(':')
          .append(h.type()));
      return ((protectThreshold == null ? "" : "protect_threshold=" + protectThreshold + " ")
          + (metadata.isEmpty() && !replaceMetadata ? "" : (replaceMetadata ? "metadata:=" : "metadata+=")
              + new java.util.TreeSet<>(metadata.keySet()) + " ")
          + (checks.isEmpty() ? "" : "checks=[" + b + "]")).trim();
    }
  }

  private final Writer writer;
  private final @Nullable Registry registry;
  private final Supplier<ProbePolicy> probePolicy;

  /** Without the probe policy's check of health checks (tests). */
  public Updates(Writer writer) {
    this.writer = writer;
    this.registry = null;
    this.probePolicy = () -> ProbePolicy.DEFAULT;
  }

  /**
   * @param registry where a new health check's targets are read
   * @param probePolicy where the server may send its probes ({@code --probe-allow}, decision 81)
   */
  public Updates(Writer writer, Registry registry, Supplier<ProbePolicy> probePolicy) {
    this.writer = writer;
    this.registry = registry;
    this.probePolicy = probePolicy;
  }

  /**
   * Checks {@code change} and applies it to the instance {@code key} of {@code service}.
   *
   * @return the updated instance, or null when no such instance is registered
   * @throws RegistryException INVALID_ARGUMENT for a weight outside 0..10000 or bad metadata
   */
  public CompletableFuture<Instance> instance(ServiceKey service, InstanceKey key, InstanceChange change) {
    return instance(service, key, change, false);
  }

  /**
   * Same; with {@code hold}, an {@code enabled = false} is an operator's hold: the instance
   * stays out of traffic whoever registers it again, until it is enabled or leaves the registry
   * (docs/decisions.md, record 40).
   */
  public CompletableFuture<Instance> instance(ServiceKey service, InstanceKey key, InstanceChange change,
      boolean hold) {
    if (change.weight() != null) {
      double weight = change.weight();
      if (!(weight >= 0 && weight <= Names.MAX_WEIGHT)) {
        throw RegistryException.invalid("weight", weight, "0..10000");
      }
    }
    Names.checkMetadata("metadata", change.metadata());
    return writer.submit(new Command.UpdateInstance(service, key, change.enabled(), change.weight(),
        change.healthy(), change.replaceMetadata(), change.metadata(), hold));
  }

  /**
   * Checks {@code change} and applies it to the settings of {@code service}.
   *
   * @throws RegistryException INVALID_ARGUMENT for a threshold outside 0..1 or bad metadata
   */
  public CompletableFuture<ServiceSettings> service(ServiceKey service, ServiceChange change) {
    if (change.protectThreshold() != null) {
      double threshold = change.protectThreshold();
      if (!(threshold >= 0 && threshold <= 1)) {
        throw RegistryException.invalid("protect_threshold", threshold, "0..1 (0 turns it off)");
      }
    }
    Names.checkMetadata("metadata", change.metadata());
    checkTargets(service, change.checks());
    return writer.submit(new Command.UpdateSettings(service, change.protectThreshold(), change.replaceMetadata(),
        change.metadata(), change.checks()));
  }

  /**
   * Refuses (INVALID_ARGUMENT, before anything is written) health checks that would send a probe
   * of a persistent instance of their cluster to a target the probe policy refuses: a new check
   * port names {@code checkPort}.
   */
  private void checkTargets(ServiceKey service, Map<String, HealthCheck> checks) {
    if (registry == null || checks.isEmpty()) {
      return;
    }
    Registry.ServiceImage image = registry.serviceImage(service);
    if (image == null) {
      return;
    }
    ProbePolicy policy = probePolicy.get();
    for (Registry.Held held : image.registrations()) {
      Instance i = held.instance();
      HealthCheck check = checks.get(i.cluster());
      if (check != null && check.type() != HealthCheck.Type.NONE && held.owner().kind() == Owner.Kind.PERSISTENT) {
        Persistent.checkTarget(policy, i, check, i.cluster());
      }
    }
  }
}
