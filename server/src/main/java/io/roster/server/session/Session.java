package io.roster.server.session;

import io.roster.server.auth.Audit;
import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.push.PushEngine;
import io.roster.server.push.PushQueue;
import io.roster.server.push.PushTarget;
import io.roster.server.registry.Claim;
import io.roster.server.registry.Command;
import io.roster.server.registry.Registry;
import io.roster.server.registry.Tally;
import io.roster.server.registry.Writer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * One connected client (one Connect stream) and everything it owns: its ephemeral instances
 * and its subscriptions. {@link #close} removes all of it in one step and makes the
 * registry push the change; nothing the session owned survives it.
 *
 * <p>Its changes go to the registry as {@link Command}s through a {@link Writer}: applied at once
 * on a standalone server, after the cluster's log committed them on a cluster member. Checks
 * that only this node can make (the connection's and address's limits) run here first, against
 * the registry as this node has applied it.
 *
 * <p>Thread-safe: requests arrive on the stream's thread, close may come from a cancel
 * handler; both take the session's lock.
 */
public final class Session {

  private final SessionInfo info;
  private final Owner owner;
  private final Registry registry;
  private final Writer writer;
  private final PushEngine engine;
  private final PushQueue queue;
  private final Scope scope;
  private final SessionLimits limits;
  private final Tally tally;

  private final Map<ServiceKey, PushTarget> subscriptions = new HashMap<>(4);
  private boolean closed;
  /** Who the session proved it is; what it may do is checked at each request (docs/security.md). */
  private volatile Principal principal;
  /**
   * Instances submitted and not yet applied (a cluster member waits for the log): counted
   * against the limits too, so that a burst cannot pass them before the first is applied.
   */
  private int pendingAdds;

  Session(SessionInfo info, Owner owner, Registry registry, Writer writer, PushEngine engine, PushQueue queue,
      Scope scope, SessionLimits limits) {
    this.info = info;
    this.owner = owner;
    this.registry = registry;
    this.writer = writer;
    this.engine = engine;
    this.queue = queue;
    this.scope = scope;
    this.limits = limits;
    this.principal = Principal.ANONYMOUS.from(Principal.hostOf(info.remoteAddress()));
    this.tally = new Tally(scope.instances());
    registry.attachOwner(owner, tally);
  }

  public SessionInfo info() {
    return info;
  }

  /** Who owns what this session registers: (this node, SESSION, its connection id). */
  public Owner owner() {
    return owner;
  }

  /** Who this session proved it is ({@link Principal#ANONYMOUS} when auth is off). */
  public Principal principal() {
    return principal;
  }

  /**
   * Sets who this session is: at its hello, then when the auth file's reload changes the
   * identity's grants or a client presents a newer credential.
   */
  public void principal(Principal p) {
    principal = p;
  }

  /**
   * Its registrations' claim in {@code service}: the client, this session's place among its
   * sessions, and its identity (an admin of the service may replace other identities' instances).
   */
  private Claim claim(ServiceKey service) {
    Principal p = principal;
    return new Claim(info.clientId(), info.sessionSeq(), p.name(),
        p.allows(Permission.ADMIN, service.namespace(), service.group(), service.name()));
  }

  /** The client connection this session runs on. */
  public Scope scope() {
    return scope;
  }

  /**
   * Registers (or replaces) an instance this session owns. A new one is checked against the
   * connection's and the address's instance limits first: two counter reads, so a refusal
   * costs no more than a no-op re-registration. Completes with the instance as stored.
   */
  public synchronized CompletableFuture<Instance> register(ServiceKey service, Instance instance) {
    checkOpen();
    check(Permission.WRITE, service);
    int adding = registry.owns(owner, service, instance.key()) ? 0 : 1;
    if (adding > 0) {
      scope.checkInstances(limits, pendingAdds + adding, "instance");
    }
    Claim held = registry.claimOf(service, instance.key());
    return pending(adding, Audit.track(principal, held == null ? "" : held.identity(), "Register",
        service + " " + instance.key(), writer.submit(new Command.Register(owner, service, instance, claim(service)))));
  }

  /** Counts {@code adding} instances as pending until {@code applied} completes. */
  private <T> CompletableFuture<T> pending(int adding, CompletableFuture<T> applied) {
    if (adding > 0 && !applied.isDone()) {
      pendingAdds += adding;
      applied.whenComplete((r, e) -> {
        synchronized (this) {
          pendingAdds -= adding;
        }
      });
    }
    return applied;
  }

  /** Removes an instance this session registered; fails with NOT_FOUND when it has none such. */
  public synchronized CompletableFuture<Void> deregister(ServiceKey service, InstanceKey key) {
    checkOpen();
    check(Permission.WRITE, service);
    return writer.submit(new Command.Deregister(owner, service, key)).thenApply(removed -> {
      if (!removed) {
        String why = registry.ownerOf(service, key) != null
            ? " is now registered by another connection, which owns it"
            : " is not registered by this connection";
        throw new RegistryException(RegistryException.Kind.NOT_FOUND, "instance",
            "instance " + key + " of " + service + why);
      }
      return null;
    });
  }

  /** Makes {@code instances} this session's complete set in {@code service}; completes with them as stored. */
  public synchronized CompletableFuture<List<Instance>> batchRegister(ServiceKey service, List<Instance> instances) {
    checkOpen();
    check(Permission.WRITE, service);
    Map<InstanceKey, Integer> seen = new HashMap<>();
    for (int i = 0; i < instances.size(); i++) {
      Integer first = seen.putIfAbsent(instances.get(i).key(), i);
      if (first != null) {
        throw RegistryException.invalid("instances[" + i + "]", instances.get(i).key().toString(),
            "an (ip, port, cluster) not already given at instances[" + first + "]");
      }
    }
    long adding = (long) seen.size() - registry.ownedCount(owner, service);
    if (adding > 0) {
      scope.checkInstances(limits, pendingAdds + adding, "instances");
    }
    java.util.Set<String> heldBy = new java.util.TreeSet<>();
    List<InstanceKey> taken = new java.util.ArrayList<>();
    for (Instance i : instances) {
      Claim held = registry.claimOf(service, i.key());
      if (held != null && !held.identity().isEmpty() && !held.identity().equals(principal.name())) {
        heldBy.add(held.identity());
        taken.add(i.key());
      }
    }
    return pending((int) Math.max(0, adding), Audit.track(principal, String.join("\", \"", heldBy), "BatchRegister",
        service + " " + (taken.isEmpty() ? instances.size() + " instances" : taken.toString()),
        writer.submit(new Command.ReplaceOwned(owner, service, instances, claim(service)))));
  }

  /**
   * Removes every instance this session registered (one revision and one push per service).
   * Completes, once the removals are applied, with a future for every other session subscribed
   * to those services that completes once it has acked the new state (see {@link
   * PushTarget#whenAcked}). The session stays open.
   */
  public synchronized CompletableFuture<List<CompletableFuture<Boolean>>> drain() {
    checkOpen();
    List<CompletableFuture<List<CompletableFuture<Boolean>>>> removals = new ArrayList<>();
    // The registry's per-owner index: services where this session still has instances.
    for (ServiceKey service : registry.servicesOf(owner)) {
      PushTarget own = subscriptions.get(service);
      removals.add(writer.submit(new Command.RemoveOwned(owner, service))
          .thenApply(revision -> engine.whenAcked(service, revision, t -> t == own)));
    }
    return CompletableFuture.allOf(removals.toArray(CompletableFuture[]::new)).thenApply(done -> {
      List<CompletableFuture<Boolean>> acks = new ArrayList<>();
      removals.forEach(r -> acks.addAll(r.join()));
      return acks;
    });
  }

  /**
   * Subscribes (or changes the clusters filter). Once the request is accepted {@code accepted}
   * runs (the caller answers the request there), then the current state is pushed.
   */
  public synchronized void subscribe(ServiceKey service, Set<String> clusters, Runnable accepted) {
    checkOpen();
    check(Permission.READ, service);
    PushTarget old = subscriptions.get(service);
    if (old == null) {
      scope.acquire(Scope.Counted.SUBSCRIPTIONS, limits);
    }
    if (old != null) {
      engine.unsubscribe(service, old);
      queue.forget(service);
    }
    accepted.run();
    PushTarget s = queue.target(service, clusters);
    subscriptions.put(service, s);
    engine.subscribe(service, s);
  }

  /** Ends a subscription; NOT_FOUND when there is none. */
  public synchronized void unsubscribe(ServiceKey service) {
    checkOpen();
    PushTarget s = subscriptions.remove(service);
    if (s == null) {
      throw new RegistryException(RegistryException.Kind.NOT_FOUND, "service",
          "this connection is not subscribed to " + service);
    }
    engine.unsubscribe(service, s);
    queue.forget(service);
    scope.release(Scope.Counted.SUBSCRIPTIONS, 1);
  }

  /**
   * Asks this session's client to move to {@code suggestedServer} (empty: its own next server),
   * whatever its protocol (see {@link io.roster.server.push.Outbound#move}).
   *
   * @return whether the client was asked
   */
  public boolean move(String reason, String suggestedServer) {
    return queue.outbound().move(reason, suggestedServer);
  }

  /** Ends this session from the server's side, telling the client {@code why} (see {@link Outbound#end}). */
  public boolean end(RegistryException why) {
    return queue.outbound().end(why);
  }

  /** The client applied a push. */
  public void ack(String pushId) {
    queue.ack(pushId, false);
  }

  /** An ack; {@code resync}: the client could not apply the delta it carried (see {@link PushQueue#ack(String, boolean)}). */
  public void ack(String pushId, boolean resync) {
    queue.ack(pushId, resync);
  }

  /** Pushes sent to this session as deltas. */
  public long sentDeltas() {
    return queue.sentDeltaCount();
  }

  /** Deltas this session's client could not apply and asked to have in full. */
  public long deltaResyncs() {
    return queue.resyncCount();
  }

  /** The stream became writable. */
  public void onReady() {
    queue.onReady();
  }

  /** Instances this session owns now (moved ones no longer count): one read. */
  public int instanceCount() {
    return tally.count();
  }

  public synchronized int subscriptionCount() {
    return subscriptions.size();
  }

  /** The services this session subscribes to, sorted. */
  public synchronized List<ServiceKey> subscriptions() {
    return subscriptions.keySet().stream().sorted().toList();
  }

  /** Whether this session subscribes to {@code service}. */
  public synchronized boolean subscribes(ServiceKey service) {
    return subscriptions.containsKey(service);
  }

  public int unackedPushes() {
    return queue.unacked();
  }

  /** States waiting for the stream to become writable. */
  public int pendingPushes() {
    return queue.pendingCount();
  }

  /** Pushes written to this session, re-sends included. */
  public long sentPushes() {
    return queue.sentCount();
  }

  public synchronized boolean isClosed() {
    return closed;
  }

  /**
   * Ends the session: removes its instances (subscribers get pushed) and subscriptions.
   * Idempotent; returns what was removed, or null if it was already closed.
   */
  public synchronized @Nullable CloseSummary close() {
    CloseSummary summary = closeKeepingRegistrations();
    if (summary == null) {
      return null;
    }
    try {
      writer.submit(new Command.RemoveOwner(owner));
    } catch (RuntimeException e) {
      // A writer never refuses an end (a cluster member retries it); nothing else may stop a close.
      org.slf4j.LoggerFactory.getLogger(Session.class).warn("Could not end {}: {}", owner, e.toString());
    }
    return summary;
  }

  /**
   * Ends the session but leaves its instances registered under its owner: its subscriptions
   * and push queue go, and the caller ends the owner later ({@code Command.RemoveOwner}), once
   * the client has had time to register them again elsewhere. Idempotent; returns what it held,
   * or null if it was already closed.
   */
  public synchronized @Nullable CloseSummary closeKeepingRegistrations() {
    if (closed) {
      return null;
    }
    closed = true;
    CloseSummary summary = new CloseSummary(tally.count(), subscriptions.size());
    queue.close();
    for (Map.Entry<ServiceKey, PushTarget> e : subscriptions.entrySet()) {
      engine.unsubscribe(e.getKey(), e.getValue());
    }
    scope.release(Scope.Counted.SUBSCRIPTIONS, subscriptions.size());
    subscriptions.clear();
    return summary;
  }

  /**
   * Refuses (PERMISSION_DENIED, nothing changed) unless this session's identity may do {@code
   * needed} on {@code service}.
   */
  public void check(Permission needed, ServiceKey service) {
    principal.check(needed, service.namespace(), service.group(), service.name());
  }

  private void checkOpen() {
    if (closed) {
      throw new RegistryException(RegistryException.Kind.FAILED_PRECONDITION, "", "session is closed");
    }
  }

  /** What a closed session owned. */
  public record CloseSummary(int instances, int subscriptions) {}
}
