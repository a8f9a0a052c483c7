package io.roster.client.internal;

import io.roster.client.DrainResult;
import io.roster.client.Instance;
import io.roster.client.RosterException;
import io.roster.client.RosterException.Code;
import io.roster.client.internal.InstancesDiff.Identity;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the client wants the server to hold for it, and how it gets there: the registrations
 * per service, each change sent and awaited ({@link #reconcile}), the full desired state sent
 * again on every welcomed session ({@link #redo}), and the drain, which forgets the
 * registrations first so that no reconnect registers them again.
 *
 * <p>During a make-before-break move ({@link ConnectionManager}), every change sent on the active
 * session also goes to the session being readied ({@link ConnectionManager#sendToStandby}): its
 * redo predates the change, and the move waits for the change's result as for the redo's.
 *
 * <p>The subscriptions are part of the desired state too, but they live in the
 * {@link SubscriptionCache} (one {@link Subscription} per service is both "subscribed to" and
 * the cached list); the redo reads their keys from it.
 *
 * <p>Threading: thread-safe. The registrations are changed only in the client's
 * {@link SerialContext}, shared with the {@link ConnectionManager} and the
 * {@link SubscriptionCache}: every change of desired state and the frame that applies it are
 * one task there, so frames reach the server in the order of the changes, and the redo (run
 * there by {@link ConnectionManager.Handler#onWelcome}) never interleaves with a change. This
 * class takes no lock. The blocking methods ({@code register..}, {@link #reconcile},
 * {@link #drain}) wait outside the context, on the caller's thread, and must not be called from
 * a transport thread or a task; {@link #redo} never blocks.
 */
final class DesiredState {

  private static final Logger log = LoggerFactory.getLogger(DefaultRosterClient.class);

  /** What a server waits for drain acks when told 0. */
  private static final Duration DEFAULT_SERVER_DRAIN = Duration.ofSeconds(5);

  private final SerialContext context;
  private final ConnectionManager connection;
  private final Duration requestTimeout;
  private final Runnable ensureOpen;
  private final Supplier<Collection<ServiceKey>> subscribed;

  // Changed only in the context. Per-service maps are copied on write, never mutated in place.
  private final Map<ServiceKey, Map<Identity, Instance>> registrations = new LinkedHashMap<>();

  /**
   * @param context the client's serial context, where the registrations change
   * @param connection where the frames go
   * @param requestTimeout the bound of every blocking call
   * @param ensureOpen throws {@link io.roster.client.ClientClosedException} once the client is closed
   * @param subscribed in the context: the keys of the subscribed services, for the redo
   */
  DesiredState(SerialContext context, ConnectionManager connection, Duration requestTimeout,
      Runnable ensureOpen, Supplier<Collection<ServiceKey>> subscribed) {
    this.context = context;
    this.connection = connection;
    this.requestTimeout = requestTimeout;
    this.ensureOpen = ensureOpen;
    this.subscribed = subscribed;
  }

  // ---- registrations ----

  /** Adds or replaces one instance (by identity) and applies it on the server. */
  void register(ServiceKey key, Instance instance) {
    Identity id = Identity.of(instance);
    Edit edit = edit(key, before -> {
      Map<Identity, Instance> after = new LinkedHashMap<>(before);
      after.put(id, instance);
      return after;
    });
    reconcile("register " + describe(instance) + " in " + key,
        () -> instance.equals(registrations.getOrDefault(key, Map.of()).get(id)),
        new Request.Register(key, instance),
        () -> restore(key, edit.after(), edit.before()),
        true,
        null);
  }

  /** Removes one instance (by identity); returns at once when there is no session. */
  void deregister(ServiceKey key, Instance instance) {
    Identity id = Identity.of(instance);
    Edit edit = edit(key, before -> {
      Map<Identity, Instance> after = new LinkedHashMap<>(before);
      after.remove(id);
      return after;
    });
    reconcile("deregister " + describe(instance) + " from " + key,
        () -> registrations.get(key) == edit.after(),
        new Request.Deregister(key, instance),
        () -> restore(key, edit.after(), edit.before()),
        false,
        Code.NOT_FOUND);
  }

  /** Replaces the whole set of a service, keyed by identity (validated by the caller). */
  void batchRegister(ServiceKey key, Map<Identity, Instance> after) {
    Edit edit = edit(key, before -> after);
    reconcile("register " + after.size() + " instance(s) in " + key,
        () -> registrations.get(key) == after,
        new Request.BatchRegister(key, after.values()),
        () -> restore(key, after, edit.before()),
        true,
        null);
  }

  /** A change of a service's desired set: what it was, and what it is now. */
  private record Edit(Map<Identity, Instance> before, Map<Identity, Instance> after) {}

  /** In the context, once the client is known to be open: the desired set of {@code key} becomes {@code change(before)}. */
  private Edit edit(ServiceKey key, UnaryOperator<Map<Identity, Instance>> change) {
    return context.call(() -> {
      ensureOpen.run();
      Map<Identity, Instance> before = registrations.getOrDefault(key, Map.of());
      Map<Identity, Instance> after = change.apply(before);
      registrations.put(key, after);
      return new Edit(before, after);
    });
  }

  /** In the context: puts {@code before} back if {@code after} is still the desired set. */
  private void restore(ServiceKey key, Map<Identity, Instance> after,
      Map<Identity, Instance> before) {
    if (registrations.get(key) == after) {
      if (before.isEmpty()) {
        registrations.remove(key);
      } else {
        registrations.put(key, before);
      }
    }
  }

  /** Whether any service has a registered instance. */
  boolean hasRegistrations() {
    return context.call(() -> registrations.values().stream().anyMatch(m -> !m.isEmpty()));
  }

  /** Forgets everything (close). */
  void clear() {
    context.run(registrations::clear);
  }

  /** The desired registrations of a service. For tests. */
  List<Instance> desired(ServiceKey key) {
    return context.call(() -> List.copyOf(registrations.getOrDefault(key, Map.of()).values()));
  }

  /**
   * In the context: the last listener of {@code key} is gone; unsubscribes on the active session,
   * if any, without waiting (a later session is simply not told about it by the redo).
   */
  void unsubscribe(ServiceKey key) {
    Session session = connection.activeSession();
    if (session != null) {
      session.request(new Request.Unsubscribe(key), requestTimeout)
          .whenComplete((r, e) -> Requests.logBackground("unsubscribe from " + key, r, e));
      connection.sendToStandby(new Request.Unsubscribe(key), requestTimeout, "unsubscribe from " + key, true);
    }
  }

  // ---- redo ----

  /**
   * The full desired state onto a new session: a batch per service with registrations, a
   * subscribe per subscribed service. Called in the context (from
   * {@link ConnectionManager.Handler#onWelcome}), before any other request can use the session.
   * Sends and does not wait.
   *
   * @return the results of the frames sent, in order (a move waits for them)
   */
  List<CompletableFuture<Answer>> redo(Session session) {
    List<CompletableFuture<Answer>> sent = redoRegistrations(session);
    int services = sent.size();
    Collection<ServiceKey> keys = subscribed.get();
    for (ServiceKey key : keys) {
      CompletableFuture<Answer> f = session.request(new Request.Subscribe(key), requestTimeout);
      f.whenComplete((r, t) -> Requests.logBackground("redo of the subscription to " + key, r, t));
      sent.add(f);
    }
    if (services > 0 || !keys.isEmpty()) {
      log.debug("Redo on {}: {} service(s) with registrations, {} subscription(s)",
          session.address, services, keys.size());
    }
    return sent;
  }

  /**
   * Sends every service's registrations on {@code session} (one batch_register each); under the
   * client's context. The redo's first half, and the reclaim after a move.
   */
  List<CompletableFuture<Answer>> redoRegistrations(Session session) {
    List<CompletableFuture<Answer>> sent = new ArrayList<>();
    for (Map.Entry<ServiceKey, Map<Identity, Instance>> e : registrations.entrySet()) {
      if (e.getValue().isEmpty()) {
        continue;
      }
      ServiceKey key = e.getKey();
      CompletableFuture<Answer> f =
          session.request(new Request.BatchRegister(key, e.getValue().values()), requestTimeout);
      f.whenComplete((r, t) -> Requests.logBackground("redo of the registrations in " + key, r, t));
      sent.add(f);
    }
    return sent;
  }

  // ---- drain ----

  /**
   * Forgets the registrations (a reconnect during or after the drain must not register them
   * again), then asks the server to drain and waits for its summary. Should the server refuse,
   * it still has them, so they are desired again (and redone).
   */
  DrainResult drain(Duration timeout) {
    Map<ServiceKey, Map<Identity, Instance>> forgotten = context.call(() -> {
      ensureOpen.run();
      Map<ServiceKey, Map<Identity, Instance>> all = new LinkedHashMap<>(registrations);
      registrations.clear();
      return all;
    });
    String what = "drain";
    Deadline deadline = Deadline.after(requestTimeout);
    Session session = connection.awaitActive(requestTimeout);
    if (session == null) {
      throw new RosterException(Code.UNAVAILABLE, "cannot drain: not connected to any Roster server of "
          + connection.addresses() + " within " + requestTimeout.toMillis() + " ms; the server removes"
          + " the instances when it notices the connection is gone");
    }
    // The server answers within the timeout it was given; allow the request timeout on top.
    Duration wait = deadline.remaining().plus(timeout.isZero() ? DEFAULT_SERVER_DRAIN : timeout);
    CompletableFuture<Answer> future = context.call(() -> {
      CompletableFuture<Answer> f = session.request(new Request.Drain(timeout.toMillis()), wait);
      // A move in progress: the server this client moves to deregisters them too (not waited for:
      // the drain's answer waits for subscribers, and the frame's order on that stream suffices).
      connection.sendToStandby(new Request.Drain(timeout.toMillis()), wait, what, false);
      return f;
    });
    Answer result = Requests.awaitAnswer(future, wait, what, () -> timeout(what, session));
    if (result == null) {
      throw new RosterException(Code.UNAVAILABLE, "cannot drain: the connection to " + session.address
          + " ended before the server answered; it removes the instances of a connection that is gone");
    }
    if (!result.ok()) {
      context.run(() -> forgotten.forEach(registrations::putIfAbsent));
      throw result.toException();
    }
    DrainResult drained = result.drain();
    if (drained.complete()) {
      log.debug("Drained: {}", drained);
    } else {
      log.warn("Drain timed out: {} of {} subscribers did not confirm within {} ms", drained.timedOut(),
          drained.notified(), timeout.toMillis());
    }
    return drained;
  }

  // ---- reconcile ----

  /**
   * Applies one change of desired state on the server: sends its frame on the active session
   * (or the next one) and waits for the result, within the request timeout overall. Used for
   * the subscribe of a new {@link Subscription} too.
   *
   * @param what for messages
   * @param stillWanted in the context: whether the change is still the desired state (else a later
   *     change superseded it and this call is done)
   * @param request the request that applies it
   * @param rollback in the context, on an error result: undo the desired-state change
   * @param waitForConnection true to wait for a session and fail UNAVAILABLE (state kept);
   *     false to return at once when there is none
   * @param alsoOk an error code that counts as success, or null
   */
  void reconcile(String what, BooleanSupplier stillWanted,
      Request request, Runnable rollback, boolean waitForConnection, @Nullable Code alsoOk) {
    Deadline deadline = Deadline.after(requestTimeout);
    Session tried = null;
    while (true) {
      Session asking = tried;
      Step step = context.call(() -> {
        ensureOpen.run();
        if (!stillWanted.getAsBoolean()) {
          return null;
        }
        Session active = connection.activeSession();
        if (active == null || active == asking) {
          return new Step(active, null);
        }
        CompletableFuture<Answer> sent = active.request(request, deadline.remaining());
        // During a move, the session being readied gets it too: its redo predates the change.
        connection.sendToStandby(request, requestTimeout, what, true);
        return new Step(active, sent);
      });
      if (step == null) {
        return;
      }
      Session session = step.session();
      CompletableFuture<Answer> future = step.sent();
      if (future != null) {
        tried = session;
      }
      if (future == null) {
        if (session == null && !waitForConnection) {
          return;
        }
        Session next;
        try {
          next = connection.awaitActive(deadline.remaining());
        } catch (RosterException e) {
          if (e.code() != Code.UNAUTHENTICATED && e.code() != Code.PERMISSION_DENIED) {
            throw e;
          }
          throw new RosterException(e.code(), "cannot " + what + ": " + String.valueOf(e.getMessage()) + "; the change is kept and"
              + " applied once a server takes the client's credentials", e.field(), null);
        }
        if (next == null) {
          throw new RosterException(Code.UNAVAILABLE, "cannot " + what + ": not connected to any"
              + " Roster server of " + connection.addresses() + " within "
              + requestTimeout.toMillis() + " ms; the change is kept and applied when the"
              + " connection is restored");
        }
        continue;
      }
      Session asked = Objects.requireNonNull(tried, "the session the change was sent on");
      Answer result = Requests.awaitAnswer(future, deadline.remaining(), what, () -> timeout(what, asked));
      if (result == null) {
        continue; // the session ended: the next one gets it by redo or by this loop
      }
      if (result.ok() || (alsoOk != null && result.code() == alsoOk)) {
        return;
      }
      if (result.unavailable()) {
        // That server cannot take writes now (a cluster member cut off from the majority, or
        // catching up): the change is kept, the client moves, and the next server gets it.
        connection.moveAway(asked, "it could not take a change: " + result.message());
        if (connection.awaitActiveOtherThan(asked, deadline.remaining()) == null) {
          throw new RosterException(Code.UNAVAILABLE, "cannot " + what + ": " + asked.address
              + " could not take it (" + result.message() + ") and no other server was ready within "
              + requestTimeout.toMillis() + " ms; the change is kept and applied when one is");
        }
        continue;
      }
      context.run(() -> {
        if (stillWanted.getAsBoolean()) {
          rollback.run();
        }
      });
      throw result.toException();
    }
  }

  /** What a round of {@link #reconcile} found: the active session, and the change's answer when it was sent there. */
  private record Step(@Nullable Session session, @Nullable CompletableFuture<Answer> sent) {}

  private RosterException timeout(String what, Session session) {
    ensureOpen.run();
    return new RosterException(Code.TIMEOUT, "cannot " + what + ": no answer from "
        + session.address + " within " + requestTimeout.toMillis() + " ms; the change is kept"
        + " and applied again on reconnect");
  }

  private static String describe(Instance i) {
    return i.ip() + ":" + i.port() + (Instance.DEFAULT_CLUSTER.equals(i.cluster())
        ? "" : " (cluster " + i.cluster() + ")");
  }
}
