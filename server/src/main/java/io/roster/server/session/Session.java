package io.roster.server.session;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.push.PushEngine;
import io.roster.server.push.PushPayload;
import io.roster.server.push.PushQueue;
import io.roster.server.push.PushTarget;
import io.roster.server.registry.Registry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * One connected client (one Connect stream) and everything it owns: its ephemeral instances
 * and its subscriptions. {@link #close} removes all of it in one step and makes the
 * registry push the change; nothing the session owned survives it.
 *
 * <p>Thread-safe: requests arrive on the stream's thread, close may come from a cancel
 * handler; both take the session's lock.
 */
public final class Session {

  private final SessionInfo info;
  private final Registry registry;
  private final PushEngine engine;
  private final PushQueue queue;
  private final SessionLimits limits;

  // Small tables: most sessions own a few instances of a few services (one session per connection).
  private final Map<ServiceKey, Set<InstanceKey>> owned = new HashMap<>(4);
  private final Map<ServiceKey, Subscription> subscriptions = new HashMap<>(4);
  private int ownedCount;
  private boolean closed;

  Session(SessionInfo info, Registry registry, PushEngine engine, PushQueue queue, SessionLimits limits) {
    this.info = info;
    this.registry = registry;
    this.engine = engine;
    this.queue = queue;
    this.limits = limits;
  }

  public SessionInfo info() {
    return info;
  }

  /** Registers (or replaces) an instance this session owns. */
  public synchronized Instance register(ServiceKey service, Instance instance) {
    checkOpen();
    Set<InstanceKey> mine = owned.get(service);
    boolean added = mine == null || !mine.contains(instance.key());
    if (added && ownedCount >= limits.maxInstances()) {
      forgetMoved();
    }
    if (added && ownedCount >= limits.maxInstances()) {
      throw RegistryException.limit("instance", "this connection already owns " + ownedCount
          + " instances (limit: " + limits.maxInstances() + ", see --max-instances-per-connection)");
    }
    Instance stored = registry.register(info.connectionId(), service, instance);
    if (added) {
      owned.computeIfAbsent(service, k -> new HashSet<>(4)).add(instance.key());
      ownedCount++;
    }
    return stored;
  }

  /** Removes an instance this session registered; NOT_FOUND when it has none such. */
  public synchronized void deregister(ServiceKey service, InstanceKey key) {
    checkOpen();
    Set<InstanceKey> mine = owned.get(service);
    if (mine == null || !mine.remove(key)) {
      throw new RegistryException(RegistryException.Kind.NOT_FOUND, "instance",
          "instance " + key + " of " + service + " is not registered by this connection");
    }
    ownedCount--;
    if (mine.isEmpty()) {
      owned.remove(service);
    }
    if (!registry.deregister(info.connectionId(), service, key)) {
      throw new RegistryException(RegistryException.Kind.NOT_FOUND, "instance",
          "instance " + key + " of " + service + " is now registered by another connection, which owns it");
    }
  }

  /**
   * Drops from the bookkeeping the instances another session took over by registering the
   * same identity (decision 7), so that counts and limits reflect what this session owns.
   */
  private void forgetMoved() {
    var services = owned.entrySet().iterator();
    while (services.hasNext()) {
      var entry = services.next();
      int before = entry.getValue().size();
      entry.getValue().removeIf(key -> !registry.owns(info.connectionId(), entry.getKey(), key));
      ownedCount -= before - entry.getValue().size();
      if (entry.getValue().isEmpty()) {
        services.remove();
      }
    }
  }

  /** Makes {@code instances} this session's complete set in {@code service}. */
  public synchronized List<Instance> batchRegister(ServiceKey service, List<Instance> instances) {
    checkOpen();
    Map<InstanceKey, Integer> seen = new LinkedHashMap<>();
    for (int i = 0; i < instances.size(); i++) {
      Integer first = seen.putIfAbsent(instances.get(i).key(), i);
      if (first != null) {
        throw RegistryException.invalid("instances[" + i + "]", instances.get(i).key().toString(),
            "an (ip, port, cluster) not already given at instances[" + first + "]");
      }
    }
    Set<InstanceKey> mine = owned.getOrDefault(service, Set.of());
    int after = ownedCount - mine.size() + seen.size();
    if (after > limits.maxInstances()) {
      forgetMoved();
      mine = owned.getOrDefault(service, Set.of());
      after = ownedCount - mine.size() + seen.size();
    }
    if (after > limits.maxInstances()) {
      throw RegistryException.limit("instances", "this connection would own " + after
          + " instances (limit: " + limits.maxInstances() + ", see --max-instances-per-connection)");
    }
    List<Instance> stored = registry.replaceOwned(info.connectionId(), service, instances);
    ownedCount = after;
    if (seen.isEmpty()) {
      owned.remove(service);
    } else {
      owned.put(service, new HashSet<>(seen.keySet()));
    }
    return stored;
  }

  /**
   * Removes every instance this session registered (one revision and one push per service)
   * and returns, for every other session subscribed to those services, a future that
   * completes once it has acked the new state (see {@link PushTarget#whenAcked}). The session
   * stays open.
   */
  public synchronized List<CompletableFuture<Boolean>> drain() {
    checkOpen();
    forgetMoved();
    List<CompletableFuture<Boolean>> acks = new ArrayList<>();
    for (ServiceKey service : owned.keySet()) {
      long revision = registry.removeOwned(info.connectionId(), service);
      Subscription own = subscriptions.get(service);
      acks.addAll(engine.whenAcked(service, revision, t -> t == own));
    }
    owned.clear();
    ownedCount = 0;
    return acks;
  }

  /**
   * Subscribes (or changes the clusters filter). Once the request is accepted {@code accepted}
   * runs (the caller answers the request there), then the current state is pushed.
   */
  public synchronized void subscribe(ServiceKey service, Set<String> clusters, Runnable accepted) {
    checkOpen();
    Subscription old = subscriptions.get(service);
    if (old == null && subscriptions.size() >= limits.maxSubscriptions()) {
      throw RegistryException.limit("subscribe", "this connection already has " + subscriptions.size()
          + " subscriptions (limit: " + limits.maxSubscriptions() + ", see --max-subscriptions-per-connection)");
    }
    if (old != null) {
      engine.unsubscribe(service, old);
      queue.forget(service);
    }
    accepted.run();
    Subscription s = new Subscription(service, Set.copyOf(clusters));
    subscriptions.put(service, s);
    engine.subscribe(service, s);
  }

  /** Ends a subscription; NOT_FOUND when there is none. */
  public synchronized void unsubscribe(ServiceKey service) {
    checkOpen();
    Subscription s = subscriptions.remove(service);
    if (s == null) {
      throw new RegistryException(RegistryException.Kind.NOT_FOUND, "service",
          "this connection is not subscribed to " + service);
    }
    engine.unsubscribe(service, s);
    queue.forget(service);
  }

  /** The client applied a push. */
  public void ack(String pushId) {
    queue.ack(pushId);
  }

  /** The stream became writable. */
  public void onReady() {
    queue.onReady();
  }

  public synchronized int instanceCount() {
    forgetMoved();
    return ownedCount;
  }

  public synchronized int subscriptionCount() {
    return subscriptions.size();
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
  public synchronized CloseSummary close() {
    if (closed) {
      return null;
    }
    closed = true;
    CloseSummary summary = new CloseSummary(ownedCount, subscriptions.size());
    queue.close();
    for (Map.Entry<ServiceKey, Subscription> e : subscriptions.entrySet()) {
      engine.unsubscribe(e.getKey(), e.getValue());
    }
    subscriptions.clear();
    registry.removeOwner(info.connectionId(), new ArrayList<>(owned.keySet()));
    owned.clear();
    ownedCount = 0;
    return summary;
  }

  private void checkOpen() {
    if (closed) {
      throw new RegistryException(RegistryException.Kind.FAILED_PRECONDITION, "", "session is closed");
    }
  }

  /** What a closed session owned. */
  public record CloseSummary(int instances, int subscriptions) {}

  /** A subscription is the session's push target for one service. */
  private final class Subscription implements PushTarget {
    private final ServiceKey service;
    private final Set<String> clusters;

    Subscription(ServiceKey service, Set<String> clusters) {
      this.service = service;
      this.clusters = clusters;
    }

    @Override
    public Set<String> clusters() {
      return clusters;
    }

    @Override
    public void offer(PushPayload payload) {
      queue.offer(service, payload);
    }

    @Override
    public CompletableFuture<Boolean> whenAcked(long revision) {
      return queue.whenAcked(service, revision);
    }
  }
}
