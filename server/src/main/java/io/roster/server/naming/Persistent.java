package io.roster.server.naming;

import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Claim;
import io.roster.server.registry.Command;
import io.roster.server.registry.Registry;
import io.roster.server.registry.Writer;
import java.util.concurrent.CompletableFuture;

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

  public Persistent(Registry registry, Writer writer) {
    this.registry = registry;
    this.writer = writer;
  }

  /** What {@code caller} registers or deregisters with: its identity, and whether it may act on another's. */
  public static Claim claim(Principal caller, ServiceKey service) {
    return new Claim("", 0, caller.name(), caller.allows(Permission.ADMIN, service.namespace(), service.group(),
        service.name()));
  }

  /**
   * Registers {@code instance} (which must say {@code ephemeral=false}) or replaces the persistent
   * instance at its address; completes with the instance as stored. Refused when the service has
   * ephemeral instances (a service is one or the other) or another identity registered it and
   * {@code claim} is not an admin's (the registry checks it, on every member).
   */
  public CompletableFuture<Instance> register(ServiceKey service, Instance instance, Claim claim) {
    return writer.submit(new Command.Register(Owner.PERSISTENT, service, instance, claim));
  }

  /**
   * Deregisters the persistent instance {@code key}; completes with whether there was one (none is
   * not an error, as in Nacos). An ephemeral instance at that address is refused, naming what holds
   * it: it goes with its owner, and an operator takes it out of traffic with {@code enabled=false}.
   * Another identity's instance is removed only by an admin of the service (the registry checks it).
   */
  public CompletableFuture<Boolean> deregister(ServiceKey service, InstanceKey key, Claim claim) {
    Owner owner = registry.ownerOf(service, key);
    if (owner == null) {
      return CompletableFuture.completedFuture(false);
    }
    if (owner.kind() != Owner.Kind.PERSISTENT) {
      throw new RegistryException(RegistryException.Kind.FAILED_PRECONDITION, "ephemeral", "instance " + key + " of "
          + service + " is ephemeral, held by " + owner + ": it goes when that client deregisters it or goes away; "
          + "enabled=false takes it out of traffic");
    }
    return writer.submit(new Command.Deregister(Owner.PERSISTENT, service, key, claim));
  }
}
