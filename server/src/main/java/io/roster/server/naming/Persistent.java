package io.roster.server.naming;

import io.roster.server.auth.Audit;
import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.probe.ProbePolicy;
import io.roster.server.registry.Claim;
import io.roster.server.registry.Command;
import io.roster.server.registry.HealthCheck;
import io.roster.server.registry.Registry;
import io.roster.server.registry.Writer;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Persistent instances, whatever the API (docs/persistence.md): registered once, owned by no
 * session or member ({@link Owner#PERSISTENT}), kept through restarts until deregistered. The
 * Roster {@code Registry} calls, Nacos's {@code PersistentInstanceRequest} and the v1 HTTP API
 * with {@code ephemeral=false} all come here.
 *
 * <p>Thread-safe: it holds no state of its own.
 */
public final class Persistent {

  private final Registry registry;
  private final Writer writer;
  private final Supplier<ProbePolicy> probePolicy;

  /** With the default probe policy (tests). */
  public Persistent(Registry registry, Writer writer) {
    this(registry, writer, () -> ProbePolicy.DEFAULT);
  }

  /** @param probePolicy where the server may send its probes ({@code --probe-allow}, decision 81) */
  public Persistent(Registry registry, Writer writer, Supplier<ProbePolicy> probePolicy) {
    this.registry = registry;
    this.writer = writer;
    this.probePolicy = probePolicy;
  }

  /** What {@code caller} registers or deregisters with: its identity, and whether it may act on another's. */
  public static Claim claim(Principal caller, ServiceKey service) {
    return new Claim("", 0, caller.name(), caller.allows(Permission.ADMIN, service.namespace(), service.group(),
        service.name()));
  }

  /**
   * Registers {@code instance} (which must say {@code ephemeral=false}) or replaces the persistent
   * instance at its address, as {@code caller}; completes with the instance as stored. Refused
   * when the service has ephemeral instances (a service is one or the other) or another identity
   * registered it and {@code caller} is not an admin of the service (the registry checks it, on
   * every member). An admin's replacement of another identity's instance, and a refusal, are
   * audited.
   *
   * @throws RegistryException INVALID_ARGUMENT naming {@code ip}, {@code port} or {@code checkPort}
   *     when the server would have to probe a target its probe policy refuses; nothing is written
   */
  public CompletableFuture<Instance> register(ServiceKey service, Instance instance, Principal caller) {
    HealthCheck check = registry.settings(service).check(instance.cluster());
    checkTarget(probePolicy.get(), instance, check, instance.cluster());
    String heldBy = heldBy(service, instance.key());
    return Audit.track(caller, heldBy, "RegisterInstance", service + " " + instance.key(),
        writer.submit(new Command.Register(Owner.PERSISTENT, service, instance, claim(caller, service))));
  }

  /** The identity that registered {@code key}, or empty. */
  private String heldBy(ServiceKey service, InstanceKey key) {
    Claim held = registry.claimOf(service, key);
    return held == null ? "" : held.identity();
  }

  /**
   * Refuses (INVALID_ARGUMENT, before anything is written) a persistent instance the server would
   * probe, under {@code check} of its cluster, at a target {@code policy} refuses: naming {@code
   * ip} when the address is refused, else {@code port} or {@code checkPort}, whichever the probe
   * would go to, with the value and what refuses it ({@code --probe-allow} or the default).
   */
  static void checkTarget(ProbePolicy policy, Instance instance, HealthCheck check, String cluster) {
    int port = check.port(instance.port());
    ProbePolicy.Refusal refused = policy.refusal(instance.ip(), port);
    if (refused == null) {
      return;
    }
    if (refused.blame() == ProbePolicy.Blame.ADDRESS) {
      throw new RegistryException(RegistryException.Kind.INVALID_ARGUMENT, "ip", "ip: \"" + instance.ip()
          + "\" is refused as a probe target: " + refused.reason());
    }
    String field = check.checkPort() == 0 ? "port" : "checkPort";
    throw new RegistryException(RegistryException.Kind.INVALID_ARGUMENT, field, field + ": " + port
        + (check.checkPort() == 0 ? "" : " of cluster " + cluster) + " is refused as a probe target of "
        + instance.ip() + ": " + refused.reason());
  }

  /**
   * Deregisters the persistent instance {@code key}; completes with whether there was one (none is
   * not an error, as in Nacos). The removal goes through the writer even when this server's
   * registry has none: in a cluster, the log may hold a registration this member has not applied.
   * An ephemeral instance at that address is refused, naming what holds it: it goes with its
   * owner, and an operator takes it out of traffic with {@code enabled=false}.
   * Another identity's instance is removed only by an admin of the service (audited).
   */
  public CompletableFuture<Boolean> deregister(ServiceKey service, InstanceKey key, Principal caller) {
    Owner owner = registry.ownerOf(service, key);
    // None here is no answer in a cluster: this member may not have applied a registration taken
    // through another one yet. The log decides, and the removal is ordered after that registration.
    if (owner != null && owner.kind() != Owner.Kind.PERSISTENT) {
      throw new RegistryException(RegistryException.Kind.FAILED_PRECONDITION, "ephemeral", "instance " + key + " of "
          + service + " is ephemeral, held by " + owner + ": it goes when that client deregisters it or goes away; "
          + "enabled=false takes it out of traffic");
    }
    return Audit.track(caller, heldBy(service, key), "DeregisterInstance", service + " " + key,
        writer.submit(new Command.Deregister(Owner.PERSISTENT, service, key, claim(caller, service))));
  }
}
