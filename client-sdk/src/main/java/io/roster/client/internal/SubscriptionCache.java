package io.roster.client.internal;

import io.roster.client.Instance;
import io.roster.client.Listener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cache of subscribed services and its policies: one {@link Subscription} per service (its
 * listeners and latest state), the {@link ShrinkHold} (warm-up and reconnect empty hold),
 * push-empty protection (in {@link Subscription}), the failover snapshots on disk, delta pushes
 * ({@link DeltaApplier}) and the acks of applied pushes. States arrive from pushes
 * ({@link #onPush}) and polls or query answers ({@link #offerAnswer}); nothing moves a
 * subscription backwards.
 *
 * <p>Ack rule: a push is acked once its state is applied, or when it is ignored (stale, not
 * subscribed); a held state, or one push-empty protection kept out, is acked only when the true
 * state is applied ({@link #releaseHeld}), so a drain waiting for this client is not told it has
 * caught up too early.
 *
 * <p>Threading: thread-safe. All state here (the subscriptions map, the hold, each
 * subscription's state) is changed only in the client's {@link SerialContext}, shared with the
 * {@link ConnectionManager}, the {@link Poller} and {@link DesiredState}; the redo reads
 * {@link #keys()} there. This class takes no lock; in the context it only sends acks
 * ({@link Session#send}, which does not block), queues failover writes for the writer thread,
 * schedules polls and queues listener events. {@link #onPush} and {@link #onWarmUpDone} are
 * handed to the context by the transport threads and never block (decision 13): disk reads are
 * done only in {@link #subscribe} on the caller's thread, disk writes go to the failover writer
 * thread, and listeners run on the listener executor, handed over through the scheduler when
 * that executor is the caller's ({@link #deliverSoon}); listener calls never run in the
 * context.
 */
final class SubscriptionCache {

  private static final Logger log = LoggerFactory.getLogger(DefaultRosterClient.class);

  /** What {@link #subscribe} did. */
  record Added(Subscription subscription, boolean created, boolean fromFailover) {}

  private final SerialContext context;
  private final ScheduledExecutorService scheduler;
  private final Ticker ticker;
  private final Executor listenerExecutor;
  private final boolean listenerExecutorOwned;
  private final boolean pushEmptyProtection;
  private final @Nullable FailoverStore failover;
  private final Supplier<Session> activeSession;
  private final @Nullable Poller poller;
  private final ShrinkHold hold;

  // Changed only in the context.
  private final Map<ServiceKey, Subscription> subscriptions = new LinkedHashMap<>();

  /**
   * @param context the client's serial context, where every state here changes
   * @param listenerExecutor where listeners run
   * @param listenerExecutorOwned true when it is the client's own pool (never runs tasks inline)
   * @param failover the failover store, or null when disabled
   * @param activeSession the active session, or null
   * @param poller polls each new subscription, or null when polling is disabled
   */
  SubscriptionCache(SerialContext context, ScheduledExecutorService scheduler, Ticker ticker,
      Executor listenerExecutor, boolean listenerExecutorOwned, boolean pushEmptyProtection,
      Duration reconnectEmptyHold, @Nullable FailoverStore failover, Supplier<Session> activeSession,
      @Nullable Poller poller) {
    this.context = context;
    this.scheduler = scheduler;
    this.ticker = ticker;
    this.listenerExecutor = listenerExecutor;
    this.listenerExecutorOwned = listenerExecutorOwned;
    this.pushEmptyProtection = pushEmptyProtection;
    this.failover = failover;
    this.activeSession = activeSession;
    this.poller = poller;
    this.hold = new ShrinkHold(scheduler, ticker, reconnectEmptyHold, activeSession,
        sub -> context.execute(() -> releaseHeld(sub)));
  }

  // ---- subscriptions ----

  /**
   * Adds a listener, creating the subscription if there is none (served from the failover
   * snapshot while no server is connected), and delivers any pending event. The caller
   * subscribes on the server when {@code created}.
   *
   * @param ensureOpen run in the context before any change
   */
  Added subscribe(ServiceKey key, Listener listener, Runnable ensureOpen) {
    // Read before the task (disk I/O); used only if this call creates the subscription.
    ServiceSnapshot saved = failover != null && activeSession.get() == null
        && !isSubscribed(key) ? failover.load(key) : null;
    Added added = context.call(() -> {
      ensureOpen.run();
      Subscription sub = subscriptions.get(key);
      boolean created = false;
      boolean fromFailover = false;
      if (sub == null) {
        sub = new Subscription(key, listenerExecutor, pushEmptyProtection);
        subscriptions.put(key, sub);
        created = true;
        if (poller != null) {
          poller.start(sub);
        }
        if (saved != null) {
          // No server now: serve the last known list until one answers (its state is newer).
          sub.offer(saved);
          fromFailover = true;
          log.info("No Roster server reachable: serving {} from the failover snapshot (revision {}, {} instances)",
              key, saved.revision(), saved.instances().size());
        }
      }
      sub.addListener(listener);
      return new Added(sub, created, fromFailover);
    });
    added.subscription().drainEvents(); // on the caller's thread, outside the context
    return added;
  }

  private boolean isSubscribed(ServiceKey key) {
    return context.call(() -> subscriptions.containsKey(key));
  }

  /** In the context: whether {@code sub} is still the subscription of {@code key}. */
  boolean isCurrent(ServiceKey key, Subscription sub) {
    return subscriptions.get(key) == sub;
  }

  /** In the context: drops a subscription whose subscribe the server refused. */
  void drop(ServiceKey key, Subscription sub) {
    if (subscriptions.remove(key, sub)) {
      sub.deactivate();
    }
  }

  /**
   * In the context: removes a listener. Returns true when it was the last one: the subscription is gone and
   * the caller unsubscribes on the server, in the same task of the context (so the frame cannot
   * overtake a later subscribe's).
   */
  boolean unsubscribe(ServiceKey key, Listener listener) {
    Subscription sub = subscriptions.get(key);
    if (sub == null || !sub.removeListener(listener) || sub.hasListeners()) {
      return false;
    }
    subscriptions.remove(key);
    sub.deactivate();
    hold.forget(sub);
    return true;
  }

  /** In the context: the keys of the subscribed services (a live view; for the redo). */
  Collection<ServiceKey> keys() {
    return subscriptions.keySet();
  }

  /** The cached state of a subscribed service, or null when not subscribed or nothing yet. */
  ServiceSnapshot snapshot(ServiceKey key) {
    return context.call(() -> {
      Subscription sub = subscriptions.get(key);
      return sub == null ? null : sub.snapshot();
    });
  }

  /** The current cached list of a subscribed service, or null. For tests. */
  @Nullable List<Instance> cached(ServiceKey key) {
    ServiceSnapshot s = snapshot(key);
    return s == null ? null : s.instances();
  }

  /** Drops every subscription (close); no event is delivered after this. */
  void close() {
    context.run(() -> {
      List<Subscription> subs = new ArrayList<>(subscriptions.values());
      subscriptions.clear();
      subs.forEach(Subscription::deactivate);
    });
  }

  // ---- states arriving ----

  /**
   * A session was welcomed (in the context, before the redo): from the second one on, a
   * reconnect, unless {@code seamless} (see {@link ShrinkHold#onWelcome}).
   */
  void onWelcome(boolean seamless) {
    hold.onWelcome(seamless);
  }

  /** A push: applied (full or delta) and acked by the rules above. In the context, in the stream's order. */
  void onPush(Session session, SessionEvents.Pushed push) {
    boolean held = false;
    boolean resync = false;
    try {
      ServiceKey key = push.key();
      Subscription sub;
      sub = subscriptions.get(key);
      if (sub != null && push.delta() != null) {
        ServiceSnapshot cached = sub.snapshot();
        DeltaApplier.Outcome outcome = DeltaApplier.apply(sub.base(push.delta().baseRevision()),
            cached == null ? null : cached.revision(), push.delta());
        if (outcome instanceof DeltaApplier.Applied applied) {
          held = !offer(sub, applied.snapshot(), ShrinkHold.Source.push(session), session, push.pushId());
        } else if (outcome instanceof DeltaApplier.Stale) {
          // Not newer than the cache; when the cache shows a held state of that revision, the
          // push is acked once the true state is applied, as a full state's would be.
          held = sub.isActive() && hold.holdsAck(sub, push.delta().revision(), session, push.pushId());
        } else if (outcome instanceof DeltaApplier.Resync r) {
          resync = true;
          log.debug("Cannot apply the delta push {} of {} ({}); asking for the full state", push.pushId(), key,
              r.why());
        }
      } else if (sub != null) {
        ServiceSnapshot state = Objects.requireNonNull(push.state(), "a push without a delta carries a state");
        held = !offer(sub, state, ShrinkHold.Source.push(session), session, push.pushId());
      }
    } finally {
      // Acked once applied, also when ignored as stale or no longer subscribed; not while
      // held back, so that a drain waiting for this client is not told it has caught up.
      // The server sends it again after its ack timeout. A delta that could not be applied
      // is answered with resync: the server sends the full state at once.
      if (!held) {
        session.send(new Request.PushAck(push.pushId(), resync));
      }
    }
  }

  /**
   * A query or poll answer for a subscription (forward only).
   *
   * @param warmUpRemainingMs what the answering server said is left of its warm-up, 0 if none
   */
  void offerAnswer(Subscription sub, ServiceSnapshot snapshot, long warmUpRemainingMs) {
    long now = ticker.nanoTime();
    context.execute(() -> offer(sub, snapshot, ShrinkHold.Source.answer(warmUpRemainingMs, now), null, null));
  }

  /**
   * Applies a state to the cache (forward only) and runs any resulting event. Returns false
   * when the cache does not show the state, so that it must not be acknowledged: its removals
   * are held back ({@link ShrinkHold}: the server is warming up, or the state would empty a
   * service shortly after a reconnect), or push-empty protection kept the old list.
   *
   * @param pushSession with {@code pushId}, the push that carried the state; null for a poll
   */
  private boolean offer(Subscription sub, ServiceSnapshot snapshot, ShrinkHold.Source source,
      @Nullable Session pushSession, @Nullable String pushId) {
    boolean ack;
    if (!sub.isActive()) {
      return true;
    }
    // The server's own state is what its next delta is based on, whatever the cache shows.
    sub.rememberServerState(snapshot);
    ShrinkHold.Verdict verdict = hold.offer(sub, snapshot, source, pushSession, pushId);
    ack = verdict.ackNow();
    if (verdict.show() != null && !apply(sub, verdict.show())) {
      ack = false;
    }
    deliverSoon(sub);
    return ack;
  }

  /** A hold may be over: apply the true state held back, and ack its push once applied. */
  private void releaseHeld(Subscription sub) {
    ShrinkHold.Settled settled = hold.settle(sub);
    if (settled == null) {
      return;
    }
    Subscription.Outcome outcome = sub.settle(settled.truth());
    if (outcome != Subscription.Outcome.STALE && failover != null) {
      failover.save(Objects.requireNonNull(sub.snapshot(), "a state was just applied"));
    }
    if (outcome != Subscription.Outcome.KEPT && settled.pushId() != null && settled.session() != null) {
      settled.session().send(new Request.PushAck(settled.pushId(), false));
    }
    deliverSoon(sub); // a hold's timer, or warm_up_done
  }

  /** The server said it is warm: its held states are applied now. In the context. */
  void onWarmUpDone(Session session) {
    List<Subscription> due;
    due = hold.warmUpDone(session);
    log.debug("Roster server {} is warm; applying {} held state(s)", session.address, due.size());
    for (Subscription sub : due) {
      releaseHeld(sub);
    }
  }

  /**
   * In the context: runs the subscription's pending listener work off the context's thread: a
   * listener executor that runs tasks inline would otherwise run user code in the context, and
   * maybe on the event loop, where a blocking SDK call waits for an answer that loop must read.
   */
  private void deliverSoon(Subscription sub) {
    if (listenerExecutorOwned) {
      sub.drainEvents(); // our own pool: handing the run over never runs listeners inline
      return;
    }
    try {
      scheduler.execute(sub::drainEvents);
    } catch (RejectedExecutionException e) {
      // Closing: events are dropped anyway.
    }
  }

  /** In the context: offers to the cache; false when push-empty protection kept the old list instead. */
  private boolean apply(Subscription sub, ServiceSnapshot snapshot) {
    Subscription.Outcome outcome = sub.offer(snapshot);
    if (outcome != Subscription.Outcome.STALE && failover != null) {
      failover.save(Objects.requireNonNull(sub.snapshot(), "a state was just applied"));
    }
    return outcome != Subscription.Outcome.KEPT;
  }
}
