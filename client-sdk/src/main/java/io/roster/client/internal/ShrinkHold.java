package io.roster.client.internal;

import io.roster.client.Instance;
import io.roster.client.internal.InstancesDiff.Identity;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds back the removals in a state that may be incomplete, so that consumers see no shrink
 * while providers are still coming back (docs/decisions.md, record 20).
 *
 * <p>A state is <em>held</em> when it would drop instances the subscription shows and one of
 * these holds:
 * <ul>
 *   <li><b>warm-up</b>: the server that sent it said it is warming up (a fresh server, whose
 *       {@code welcome} or query answer told the time left), until that time is up or the
 *       server sends {@code warm_up_done};
 *   <li><b>reconnect empty hold</b> ({@link ClientOptions#reconnectEmptyHold()}): it would
 *       empty the service, and this client reconnected less than the hold ago (or is between
 *       sessions). This is the same rule for a server that does not announce its warm-up, and
 *       for empties only.
 * </ul>
 * A lack is never held when the state lists it as <em>departed</em>: a warming server lists the
 * instances it saw leave (deregistered, their owner's connection or lease ended there, or
 * disabled), and only the ones it never had may still be on their way back. While held, the
 * subscription shows the new state <em>merged</em> with what it showed: the new state's
 * instances (additions, changes and departures at once) plus the ones it lacks, at the new
 * state's revision. The true state is kept here and applied ({@link #settle}) when the hold
 * ends; a newer state that drops nothing replaces it at once. The push of a held state is not
 * acknowledged until the true state is applied: a drain must not be told that this client
 * dropped an instance it still routes to. A held state whose warming session ended, or a held
 * query answer while no session is active, is replaced only by a newer state (the next
 * session's redo brings one), never applied by the timer: it is known to be partial.
 *
 * <p>Every method is called in the client's serial context, where all state here changes.
 */
final class ShrinkHold {

  private static final Logger log = LoggerFactory.getLogger(ShrinkHold.class);

  /** How often a hold whose source session ended looks again, until a newer state settles it. */
  static final Duration RECHECK = Duration.ofSeconds(1);

  /** The same order as the server's lists: ip (as a string), port, cluster. */
  private static final Comparator<Instance> SERVER_ORDER = Comparator.comparing(Instance::ip)
      .thenComparingInt(Instance::port).thenComparing(Instance::cluster);

  /**
   * Where a state came from.
   *
   * @param session the session that pushed it, or null for a query answer
   * @param warmUpEndsAtNanos for a query answer, when the answering server's warm-up ends
   *     ({@link Long#MIN_VALUE} when it said it was warm)
   */
  record Source(@Nullable Session session, long warmUpEndsAtNanos) {
    static Source push(Session session) {
      return new Source(session, Long.MIN_VALUE);
    }

    static Source answer(long warmUpRemainingMs, long nowNanos) {
      return new Source(null, warmUpRemainingMs <= 0 ? Long.MIN_VALUE
          : nowNanos + TimeUnit.MILLISECONDS.toNanos(Math.min(warmUpRemainingMs, Session.MAX_WARM_UP_MS)));
    }
  }

  /**
   * What to do with an offered state.
   *
   * @param show the state to cache now (the offered one, or it merged with what was shown), or
   *     null to change nothing
   * @param ackNow whether its push may be acknowledged now
   */
  record Verdict(@Nullable ServiceSnapshot show, boolean ackNow) {}

  /** A held state that is due: apply {@code truth}, then ack {@code pushId} on {@code session}. */
  record Settled(ServiceSnapshot truth, @Nullable Session session, @Nullable String pushId) {}

  /** A held true state, where it came from, and the push to ack once it is applied. */
  private static final class Held {
    ServiceSnapshot truth;
    Source source;
    @Nullable Session ackSession;
    @Nullable String ackPushId;
    @Nullable ScheduledFuture<?> timer;
    long timerAt;

    Held(ServiceSnapshot truth, Source source) {
      this.truth = truth;
      this.source = source;
    }
  }

  private final ScheduledExecutorService scheduler;
  private final Ticker ticker;
  private final Duration reconnectEmptyHold;
  private final Supplier<Session> activeSession;
  private final Consumer<Subscription> due;
  private final IdentityHashMap<Subscription, Held> held = new IdentityHashMap<>();
  private boolean welcomedBefore;
  private boolean reconnected;
  private long reconnectedAtNanos;

  /**
   * @param activeSession the active session, or null
   * @param due called from the scheduler when a hold may be over; it goes to the context and calls
   *     {@link #settle}
   */
  ShrinkHold(ScheduledExecutorService scheduler, Ticker ticker, Duration reconnectEmptyHold,
      Supplier<Session> activeSession, Consumer<Subscription> due) {
    this.scheduler = scheduler;
    this.ticker = ticker;
    this.reconnectEmptyHold = reconnectEmptyHold;
    this.activeSession = activeSession;
    this.due = due;
  }

  /**
   * A session was welcomed; from the second one on, this is a reconnect, which starts the
   * reconnect empty hold, unless it is {@code seamless}: a move to a server that is not warming
   * up, made while the old session still served (make-before-break: balance, a member's drain).
   * Nothing was missed then, and the new server's states are whole: an empty one is true, and
   * holding it would only keep a gone instance in the list for the length of the hold (decision 51).
   */
  void onWelcome(boolean seamless) {
    if (welcomedBefore && !seamless && !reconnectEmptyHold.isZero()) {
      reconnectedAtNanos = ticker.nanoTime();
      reconnected = true;
    }
    welcomedBefore = true;
  }

  /**
   * Decides what an offered state does to the cache.
   *
   * @param pushSession with {@code pushId}, the push that carried it; both null for an answer
   */
  Verdict offer(Subscription sub, ServiceSnapshot next, Source source, @Nullable Session pushSession,
      @Nullable String pushId) {
    ServiceSnapshot shown = sub.snapshot();
    Held h = held.get(sub);
    if (h != null && Long.compareUnsigned(next.revision(), h.truth.revision()) <= 0) {
      // Not newer than the state held back: nothing to show, and no ack while it is held.
      if (pushId != null && next.revision() == h.truth.revision()) {
        h.ackSession = pushSession;
        h.ackPushId = pushId;
      }
      return new Verdict(null, false);
    }
    if (shown == null || Long.compareUnsigned(next.revision(), shown.revision()) <= 0) {
      return new Verdict(next, true); // the cache takes it, or ignores it as stale
    }
    List<Instance> lacking = lacking(shown, next);
    long now = ticker.nanoTime();
    long left = lacking.isEmpty() ? 0 : holdNanos(next, shown, source, now);
    if (left <= 0) {
      forget(sub);
      return new Verdict(next, true);
    }
    if (h == null) {
      h = new Held(next, source);
      held.put(sub, h);
      log.debug("Holding back the removal of {} instance(s) of {} for up to {} ms ({})", lacking.size(),
          sub.key(), TimeUnit.NANOSECONDS.toMillis(left), warmUpLeft(source, now) > 0
              ? "the server is warming up" : "just reconnected");
    }
    h.truth = next;
    h.source = source;
    if (pushId != null) {
      h.ackSession = pushSession;
      h.ackPushId = pushId;
    }
    arm(sub, h, left);
    List<Instance> merged = new ArrayList<>(next.instances().size() + lacking.size());
    merged.addAll(next.instances());
    merged.addAll(lacking);
    merged.sort(SERVER_ORDER);
    return new Verdict(new ServiceSnapshot(next.key(), merged, next.revision(), next.checksum(),
        next.protectThresholdReached()), false);
  }

  /**
   * A push at {@code revision} that is not newer than the cache (a re-sent delta, which cannot
   * be offered as a state): whether its ack must wait because the state it names is held back,
   * as {@link #offer} decides for a full state. Its ack then goes out once the true state at
   * that revision is applied.
   */
  boolean holdsAck(Subscription sub, long revision, Session pushSession, String pushId) {
    Held h = held.get(sub);
    if (h == null || Long.compareUnsigned(revision, h.truth.revision()) > 0) {
      return false;
    }
    if (revision == h.truth.revision()) {
      h.ackSession = pushSession;
      h.ackPushId = pushId;
    }
    return true;
  }

  /**
   * The hold of {@code sub} may be over: returns the true state to apply now, or null when there
   * is none or it is still held (then it looks again later).
   */
  @Nullable Settled settle(Subscription sub) {
    Held h = held.get(sub);
    if (h == null) {
      return null;
    }
    ServiceSnapshot shown = sub.snapshot();
    if (!sub.isActive() || shown == null) {
      forget(sub);
      return null;
    }
    long left = holdNanos(h.truth, shown, h.source, ticker.nanoTime());
    if (left > 0) {
      arm(sub, h, left);
      return null;
    }
    forget(sub);
    return new Settled(h.truth, h.ackSession, h.ackPushId);
  }

  /** {@code session}'s server said it is warm: its held states are due now. */
  List<Subscription> warmUpDone(Session session) {
    List<Subscription> subs = new ArrayList<>();
    for (Map.Entry<Subscription, Held> e : held.entrySet()) {
      if (e.getValue().source.session() == session) {
        subs.add(e.getKey());
      }
    }
    return subs;
  }

  /** Drops the hold of {@code sub} (superseded, or unsubscribed). */
  void forget(Subscription sub) {
    Held h = held.remove(sub);
    if (h != null && h.timer != null) {
      h.timer.cancel(false);
    }
  }

  /** How long {@code next} is held given what is shown; 0 or less to apply it now. */
  private long holdNanos(ServiceSnapshot next, ServiceSnapshot shown, Source source, long now) {
    long left = warmUpLeft(source, now);
    if (next.instances().isEmpty() && !shown.instances().isEmpty()) {
      left = Math.max(left, emptyHoldNanos(now));
    }
    return left;
  }

  private long warmUpLeft(Source source, long now) {
    Session s = source.session();
    if (s == null) {
      if (source.warmUpEndsAtNanos() == Long.MIN_VALUE) {
        return 0;
      }
      long left = source.warmUpEndsAtNanos() - now;
      // An answer taken while its server was warming is partial; between sessions nothing
      // newer comes by push, so it waits for the next session's state (or a later answer).
      return left <= 0 && activeSession.get() == null ? RECHECK.toNanos() : left;
    }
    if (activeSession.get() != s) {
      // Its server went away (or this client moved): a state it sent may lack instances its
      // successor has. Held until the next session's state settles it, never by time alone.
      return RECHECK.toNanos();
    }
    return s.warmUpLeftNanos(now);
  }

  /** The reconnect empty hold: left of it after a reconnect, all of it between sessions. */
  private long emptyHoldNanos(long now) {
    if (reconnectEmptyHold.isZero() || !welcomedBefore) {
      return 0;
    }
    if (activeSession.get() == null) {
      return reconnectEmptyHold.toNanos(); // between sessions: providers are reconnecting too
    }
    return reconnected ? reconnectedAtNanos + reconnectEmptyHold.toNanos() - now : 0;
  }

  private void arm(Subscription sub, Held h, long delayNanos) {
    long at = ticker.nanoTime() + delayNanos;
    if (h.timer != null && !h.timer.isDone()) {
      if (h.timerAt - at <= 0) {
        return; // fires first; it looks again then
      }
      h.timer.cancel(false);
    }
    h.timerAt = at;
    try {
      h.timer = scheduler.schedule(() -> due.accept(sub), delayNanos, TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      h.timer = null; // closing
    }
  }

  /**
   * The instances {@code shown} has that {@code next} lacks, by identity, less those {@code next}
   * lists as departed: their removal is a fact its server saw, never held.
   */
  private static List<Instance> lacking(ServiceSnapshot shown, ServiceSnapshot next) {
    Set<Identity> ids = new HashSet<>(next.instances().size() * 2);
    for (Instance i : next.instances()) {
      ids.add(Identity.of(i));
    }
    List<Instance> lacking = new ArrayList<>();
    for (Instance i : shown.instances()) {
      Identity id = Identity.of(i);
      if (!ids.contains(id) && !next.departed().contains(id)) {
        lacking.add(i);
      }
    }
    return lacking;
  }
}
