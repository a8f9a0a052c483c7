package io.roster.server.session;

import io.roster.server.auth.Authenticator;
import io.roster.server.auth.Principal;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.push.AckCollector;
import io.roster.server.push.Outbound;
import io.roster.server.push.PushEngine;
import io.roster.server.push.PushQueue;
import io.roster.server.probe.ProbePolicy;
import io.roster.server.registry.Command;
import io.roster.server.registry.Registry;
import io.roster.server.registry.Writer;
import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/** Creates sessions and knows every live one on this node. Thread-safe. */
public final class SessionManager {

  private final Registry registry;
  private final Writer writer;
  private final PushEngine engine;
  private final Scheduler scheduler;
  private final Duration ackTimeout;
  private final SessionLimits limits;
  private final String idPrefix;
  private final AtomicLong ids = new AtomicLong();
  /** This node's id, told once the endpoint knows its port; sessions own as (node, SESSION, connection). */
  private volatile String nodeId = "";
  private final Map<String, Session> sessions = new ConcurrentHashMap<>();
  /** Address scopes with at least one open connection. */
  private final Map<String, Scope> addresses = new ConcurrentHashMap<>();
  private volatile Authenticator authenticator = Authenticator.off();
  private volatile ProbePolicy probePolicy = ProbePolicy.DEFAULT;
  private final RequestCounters requests;
  /** Told of every session opened (the server's warm-up counts them). */
  private volatile Runnable opened = () -> { };

  /** A session manager whose sessions change the registry directly (standalone). */
  public SessionManager(Registry registry, PushEngine engine, Scheduler scheduler,
      Duration ackTimeout, SessionLimits limits) {
    this(registry, Writer.direct(registry), engine, scheduler, ackTimeout, limits);
  }

  /** A session manager whose sessions' changes go through {@code writer}. */
  public SessionManager(Registry registry, Writer writer, PushEngine engine, Scheduler scheduler,
      Duration ackTimeout, SessionLimits limits) {
    this.registry = registry;
    this.writer = writer;
    this.engine = engine;
    this.scheduler = scheduler;
    this.requests = new RequestCounters(scheduler::nanoTime);
    this.ackTimeout = ackTimeout;
    this.limits = limits;
    this.idPrefix = Long.toString(scheduler.currentTimeMillis(), 36) + "-";
  }

  /** Runs {@code listener} on the opening thread each time a session opens, before it is used. */
  public void onOpen(Runnable listener) {
    this.opened = listener;
  }

  /**
   * Sets this node's id (the one told to clients in {@code welcome}); sessions opened from now
   * on own their registrations as {@code Owner.session(nodeId, connectionId)}.
   */
  public void nodeId(String nodeId) {
    this.nodeId = java.util.Objects.requireNonNull(nodeId);
  }

  /** This node's id; empty until {@link #nodeId(String)} is called. */
  public String nodeId() {
    return nodeId;
  }

  /** Sets who checks the sessions' credentials (auth is off until this is called); before the port opens. */
  public void authenticator(Authenticator authenticator) {
    this.authenticator = authenticator;
  }

  /** Sets where the server may probe ({@code --probe-allow}); before the port opens. */
  public void probePolicy(ProbePolicy policy) {
    this.probePolicy = policy;
  }

  /** Where the server may probe, for every protocol's persistent registrations ({@link ProbePolicy#DEFAULT} by default). */
  public ProbePolicy probePolicy() {
    return probePolicy;
  }

  /** Who checks every protocol's credentials ({@link Authenticator#off()} by default). */
  public Authenticator authenticator() {
    return authenticator;
  }

  /**
   * Gives every session its identity's current grants, and ends (through its transport, {@link
   * Session#end}) each whose identity the auth file no longer has, whose credential has expired,
   * or whose access token was issued before its user's password changed.
   * Run after every check of the auth file.
   *
   * @return how many sessions were ended
   */
  public int revalidate() {
    int ended = 0;
    for (Session s : sessions.values()) {
      Principal p = s.principal();
      if (!p.named()) {
        continue;
      }
      Principal now = authenticator.revalidate(p);
      if (now != null) {
        s.principal(now);
      } else if (s.end(RegistryException.unauthenticated("", "the credential of " + authenticator.ended(p)
          + "; connect again with a valid one"))) {
        ended++;
      }
    }
    return ended;
  }

  /** A fresh connection id, unique on this node across restarts. */
  public String nextConnectionId() {
    return idPrefix + ids.incrementAndGet();
  }

  /** Where sessions' (and operators') changes to the registry go. */
  public Writer writer() {
    return writer;
  }

  /** The wall clock of this manager's scheduler, in milliseconds: when a session opens. */
  public long currentTimeMillis() {
    return scheduler.currentTimeMillis();
  }

  /** The limits sessions, subscriptions and Watch calls are held to. */
  public SessionLimits limits() {
    return limits;
  }

  /**
   * A client connection from {@code address} (host, no port) opened: its scope, which shares
   * the address's. Pair with {@link #closeConnection}.
   */
  public Scope openConnection(String address) {
    Scope shared = addresses.compute(address, (k, existing) -> {
      Scope a = existing == null ? new Scope(k, null) : existing;
      a.connections.incrementAndGet();
      return a;
    });
    return new Scope(address, shared);
  }

  /** The connection of {@code scope} closed; its address's scope goes with its last connection. */
  public void closeConnection(Scope scope) {
    addresses.computeIfPresent(scope.address(), (k, a) -> a.connections.decrementAndGet() == 0 ? null : a);
  }

  /** Opens a session on a connection and address of its own, tracked nowhere else (tests). */
  public Session open(SessionInfo info, Outbound outbound) {
    return open(info, outbound, new Scope(info.remoteAddress(), new Scope(info.remoteAddress(), null)));
  }

  /**
   * Opens a session on the connection of {@code scope}, writing pushes to {@code outbound};
   * refused (RESOURCE_EXHAUSTED) when the connection or its address has as many sessions as
   * allowed.
   */
  public Session open(SessionInfo info, Outbound outbound, Scope scope) {
    return open(info, outbound, scope, false);
  }

  /**
   * Same, and with {@code deltas} (its client said it applies them) a state may go to the
   * session as a delta against the last one the client acked (docs/decisions.md, record 22).
   */
  public Session open(SessionInfo info, Outbound outbound, Scope scope, boolean deltas) {
    return open(info, outbound, scope, deltas, Owner.Kind.SESSION);
  }

  /**
   * Same, for an owner of another {@code kind}: a Nacos connection ({@link Owner.Kind#NACOS})
   * is a session in every other respect (limits, pushes, acks, cleanup on close).
   */
  public Session open(SessionInfo info, Outbound outbound, Scope scope, boolean deltas, Owner.Kind kind) {
    scope.acquire(Scope.Counted.SESSIONS, limits);
    PushQueue queue = new PushQueue(outbound, scheduler, ackTimeout, deltas ? engine.deltas() : null,
        engine.counters());
    Session s = new Session(info, new Owner(nodeId, kind, info.connectionId()), registry, writer, engine, queue, scope,
        limits);
    sessions.put(info.connectionId(), s);
    opened.run();
    return s;
  }

  /**
   * Drains {@code session}: removes what it registered, pushes, and completes once every other
   * subscriber has acked or gone, or when {@code timeout} passes.
   */
  public CompletableFuture<AckCollector.Counts> drain(Session session, Duration timeout) {
    return counted(session.drain().thenCompose(acks -> {
      requests.drainStarted();
      return AckCollector.collect(acks, timeout, scheduler);
    }));
  }

  /**
   * Takes an instance out of traffic (disabled, still registered), pushes, and completes once
   * every subscriber has acked or gone, or when {@code timeout} passes. Completes with null
   * when there is no such instance.
   */
  public CompletableFuture<AckCollector.Counts> drainInstance(ServiceKey service, InstanceKey key, Duration timeout) {
    return drainInstance(service, key, timeout, DrainProgress.NONE);
  }

  /** What a drain tells as it goes, for a page that shows it live. */
  public interface DrainProgress {
    DrainProgress NONE = new DrainProgress() {};

    /** The instance is out of traffic, and {@code notified} subscribers were pushed the change. */
    default void started(int notified) {}

    /** {@code acked} of them have acknowledged so far. */
    default void acked(int acked) {}
  }

  /** The same, telling {@code progress} as the drain goes. */
  public CompletableFuture<AckCollector.Counts> drainInstance(ServiceKey service, InstanceKey key, Duration timeout,
      DrainProgress progress) {
    return writer.submit(Command.UpdateInstance.enabled(service, key, false)).thenCompose(updated -> {
      if (updated == null) {
        return CompletableFuture.completedFuture(null);
      }
      long revision = registry.snapshot(service).revision();
      java.util.List<CompletableFuture<Boolean>> acks = engine.whenAcked(service, revision, t -> false);
      requests.drainStarted();
      progress.started(acks.size());
      return counted(AckCollector.collect(acks, timeout, scheduler, progress::acked));
    });
  }

  /** Counts a started drain's end: confirmed when every subscriber it told acked. */
  private CompletableFuture<AckCollector.Counts> counted(CompletableFuture<AckCollector.Counts> drain) {
    return drain.whenComplete((counts, failed) -> {
      if (counts != null) {
        requests.drainEnded(counts.timedOut() == 0);
      }
    });
  }

  /** Closes the session and forgets it; null if it was already closed. */
  public Session.@Nullable CloseSummary close(Session session) {
    sessions.remove(session.info().connectionId(), session);
    Session.CloseSummary summary = session.close();
    if (summary != null) {
      session.scope().release(Scope.Counted.SESSIONS, 1);
    }
    return summary;
  }

  /**
   * Closes the session and forgets it, but ends its owner (removes its instances, pushes) only
   * after {@code holdEnd}: a client that was asked to move and drops its old connection before
   * it registers again (the Nacos client's redo) keeps its instances in the meantime, and its
   * registrations on the new connection take them over without a change anyone sees. A client
   * that does not come back loses them {@code holdEnd} later. Null if it was already closed.
   */
  public Session.@Nullable CloseSummary closeHoldingEnd(Session session, Duration holdEnd) {
    sessions.remove(session.info().connectionId(), session);
    Session.CloseSummary summary = session.closeKeepingRegistrations();
    if (summary != null) {
      session.scope().release(Scope.Counted.SESSIONS, 1);
      Owner owner = session.owner();
      scheduler.schedule(() -> {
        try {
          writer.submit(new Command.RemoveOwner(owner));
        } catch (RuntimeException e) {
          org.slf4j.LoggerFactory.getLogger(SessionManager.class).warn("Could not end {}: {}", owner, e.toString());
        }
      }, holdEnd);
    }
    return summary;
  }

  /**
   * Asks the clients of the sessions {@code which} selects to move, whatever their protocol:
   * each to the server {@code suggest} names for it (a cluster spreads them over its live
   * members; empty: the client's own next server), for {@code reason}. The sessions stay until
   * their clients leave.
   *
   * @return how many were asked
   */
  public int move(String reason, java.util.function.Predicate<Session> which,
      java.util.function.Supplier<String> suggest) {
    int asked = 0;
    for (Session s : sessions.values()) {
      if (which.test(s) && s.move(reason, suggest.get())) {
        asked++;
      }
    }
    return asked;
  }

  /**
   * Balance: asks up to {@code count} of the newest sessions that have been here for at least
   * {@code settledFor} to move to {@code to}. A session opened more recently may be a client in
   * the middle of a move, its redo not applied yet, which must not be moved again (decision 33).
   *
   * @return how many were asked
   */
  public int shed(int count, Duration settledFor, String reason, String to) {
    long settled = scheduler.currentTimeMillis() - settledFor.toMillis();
    List<Session> all = all().stream().filter(s -> s.info().connectedAtMillis() <= settled).toList();
    Set<Session> chosen = new HashSet<>(all.subList(Math.max(0, all.size() - count), all.size()));
    return move(reason, chosen::contains, () -> to);
  }

  /** Live sessions, oldest first. */
  public List<Session> all() {
    List<Session> list = new ArrayList<>(sessions.values());
    list.sort(Comparator.comparingLong((Session s) -> s.info().connectedAtMillis())
        .thenComparing(s -> s.info().connectionId()));
    return list;
  }

  public int count() {
    return sessions.size();
  }

  /** Live sessions whose owners are of {@code kind}. */
  public int count(Owner.Kind kind) {
    int n = 0;
    for (Session s : sessions.values()) {
      n += s.owner().kind() == kind ? 1 : 0;
    }
    return n;
  }

  /** The requests every protocol's sessions and ports handled, for the server's metrics. */
  public RequestCounters requests() {
    return requests;
  }
}
