package io.roster.client.internal;

import io.roster.client.InstancesChangeEvent;
import io.roster.client.Listener;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One subscribed service: its listeners, its cached state and the delivery of events.
 *
 * <p>The cache only moves forward: a state is applied only when its revision is greater than
 * the cached one, except that the true state held back by {@link ShrinkHold} replaces the
 * merged one shown at the same revision ({@link #settle}).
 *
 * <p><b>Delivery is latest-wins per listener, so memory stays bounded.</b> Nothing is queued
 * per state: a delivery run compares the current state with the state each listener last
 * heard of and, when the visible content differs (or the listener has heard nothing yet),
 * calls it once with the difference. A slow listener therefore skips intermediate states and
 * sees fewer, larger differences; every listener always ends on the latest state, hears
 * revisions in increasing order, and never hears of a no-op. At most one delivery run per
 * service is pending, and runs of one service never overlap.
 *
 * <p><b>Push-empty protection</b> (optional): a state that would empty a service that had
 * instances is cached with the last non-empty list and the new revision, and listeners are
 * told once, with {@link InstancesChangeEvent#emptyPushIgnored()} set.
 *
 * <p>{@link #offer} and {@link #addListener} are called in the client's serial context;
 * {@link #drainEvents()} outside it.
 */
final class Subscription {

  private static final Logger log = LoggerFactory.getLogger(Subscription.class);

  /** What {@link #offer} did with a state. */
  enum Outcome {
    /** Its revision was not newer than the cached one; nothing changed. */
    STALE,
    /** Newer revision, same visible content; cached without an event. */
    UNCHANGED,
    /** Newer revision with different content (or the first state); listeners will hear of it. */
    CHANGED,
    /**
     * Newer revision that would have emptied the service: push-empty protection kept the last
     * list. The client does not acknowledge such a push (a drain must not count it as caught
     * up: this client still routes to the old instances).
     */
    KEPT
  }

  /** The cached state, and whether its list was kept from before an empty push. */
  private record State(ServiceSnapshot snapshot, boolean emptyPushIgnored) {}

  /** A listener and what it last heard of; {@code heard} is touched only by delivery runs. */
  private static final class Receiver {
    final Listener listener;
    volatile boolean removed;
    @Nullable State heard;

    Receiver(Listener listener) {
      this.listener = listener;
    }
  }

  private final ServiceKey key;
  private final boolean protectFromEmpty;
  private final List<Receiver> receivers = new CopyOnWriteArrayList<>();
  private final SerialExecutor events;
  private final AtomicBoolean runPending = new AtomicBoolean();
  private volatile boolean active = true;
  private volatile @Nullable State state;
  /** The last states applied, as the server sent them, newest last; guarded by itself. */
  private final ArrayDeque<ServiceSnapshot> bases = new ArrayDeque<>(BASES);
  static final int BASES = 4;

  /** Run once by {@link #deactivate}: the work of other parts for this subscription stops (its polls). */
  private final List<Runnable> onDeactivate = new CopyOnWriteArrayList<>();

  Subscription(ServiceKey key, Executor listenerExecutor) {
    this(key, listenerExecutor, false);
  }

  Subscription(ServiceKey key, Executor listenerExecutor, boolean protectFromEmpty) {
    this.key = key;
    // A dropped run (rejected by the executor) must not leave the next change unscheduled.
    this.events = new SerialExecutor(listenerExecutor, () -> runPending.set(false));
    this.protectFromEmpty = protectFromEmpty;
  }

  ServiceKey key() {
    return key;
  }

  /** The cached state, or null before the first one arrived. */
  @Nullable ServiceSnapshot snapshot() {
    State s = state;
    return s == null ? null : s.snapshot;
  }

  /**
   * The server's state at {@code revision}, if it is one of the last {@value #BASES} states
   * the server sent ({@link #rememberServerState}): what a delta push with that base revision
   * applies to. The server's state, not the cache's: under push-empty protection or a warm-up
   * hold the cache shows another list.
   * A few are kept, not one, because a change that comes within a round trip of the previous
   * one is sent against the state acked before it.
   */
  @Nullable ServiceSnapshot base(long revision) {
    synchronized (bases) {
      for (ServiceSnapshot s : bases) {
        if (s.revision() == revision) {
          return s;
        }
      }
    }
    return null;
  }

  /**
   * Keeps {@code serverState}, a state the server sent (pushed or polled), as a possible base
   * of its next delta pushes. Not the cache's state: a warm-up hold or push-empty protection
   * may show another list at the same revision.
   */
  void rememberServerState(ServiceSnapshot serverState) {
    synchronized (bases) {
      bases.removeIf(s -> s.revision() == serverState.revision());
      if (bases.size() == BASES) {
        bases.removeFirst();
      }
      bases.addLast(serverState);
    }
  }

  boolean isActive() {
    return active;
  }

  boolean hasListeners() {
    return !receivers.isEmpty();
  }

  /**
   * Adds a listener (once; by identity). When a state is cached, the listener alone hears of
   * it at once, with the whole list in {@code added}.
   *
   * @return false when the listener was already there
   */
  boolean addListener(Listener listener) {
    if (indexOf(listener) >= 0) {
      return false;
    }
    receivers.add(new Receiver(listener));
    if (state != null) {
      scheduleRun();
    }
    return true;
  }

  /** Removes a listener (by identity); it hears nothing more, even of a pending run. */
  boolean removeListener(Listener listener) {
    int i = indexOf(listener);
    if (i < 0) {
      return false;
    }
    receivers.remove(i).removed = true;
    return true;
  }

  /** Applies a state if it is newer than the cached one; listeners hear of visible changes. */
  Outcome offer(ServiceSnapshot next) {
    return offer(next, false);
  }

  /**
   * Applies the true state that was held back ({@link ShrinkHold}) in place of the merged one
   * shown at its revision: the same revision replaces, an older one does not.
   */
  Outcome settle(ServiceSnapshot truth) {
    return offer(truth, true);
  }

  private Outcome offer(ServiceSnapshot next, boolean sameRevisionReplaces) {
    State previous = state;
    if (previous != null && Long.compareUnsigned(next.revision(), previous.snapshot.revision())
        < (sameRevisionReplaces ? 0 : 1)) {
      return Outcome.STALE;
    }
    boolean keep = protectFromEmpty && previous != null && next.instances().isEmpty()
        && !previous.snapshot.instances().isEmpty();
    State current = keep && previous != null
        ? new State(new ServiceSnapshot(key, previous.snapshot.instances(), next.revision(), next.checksum(),
            previous.snapshot.protectThresholdReached()), true)
        : new State(next, false);
    state = current;
    if (keep && previous != null && !previous.emptyPushIgnored) {
      log.warn("{} would have no instances at revision {}; keeping the last {} (push-empty protection)",
          key, next.revision(), previous.snapshot.instances().size());
    }
    if (previous != null && previous.emptyPushIgnored == current.emptyPushIgnored
        && previous.snapshot.protectThresholdReached() == current.snapshot.protectThresholdReached()
        && InstancesDiff.between(previous.snapshot.instances(), current.snapshot.instances()).isEmpty()) {
      return keep ? Outcome.KEPT : Outcome.UNCHANGED;
    }
    scheduleRun();
    return keep ? Outcome.KEPT : Outcome.CHANGED;
  }

  /** Stops the subscription: no more events, a pending run is dropped, and its polls stop. */
  @SuppressWarnings("ModifyCollectionInEnhancedForLoop") // a CopyOnWriteArrayList: the loop walks a snapshot
  void deactivate() {
    active = false;
    events.clear();
    for (Runnable r : onDeactivate) {
      onDeactivate.remove(r);
      r.run();
    }
  }

  /** Runs {@code stop} when the subscription is deactivated (at once when it already is). */
  void onDeactivate(Runnable stop) {
    onDeactivate.add(stop);
    if (!active && onDeactivate.remove(stop)) {
      stop.run();
    }
  }

  /** Starts a pending delivery run on the listener executor. Call outside the client's serial context. */
  void drainEvents() {
    events.drain();
  }

  private void scheduleRun() {
    if (runPending.compareAndSet(false, true)) {
      events.add(this::deliver);
    }
  }

  @SuppressWarnings("ReferenceEquality") // heard == current: the same State object, a cheap test; an equal one is caught by the diff
  private void deliver() {
    runPending.set(false); // a state offered from now on schedules another run
    State current = state;
    if (current == null) {
      return; // nothing cached yet: nothing to tell
    }
    for (Receiver r : receivers) {
      if (!active) {
        return;
      }
      if (r.removed) {
        continue;
      }
      State heard = r.heard;
      // A settled state replaces a held one at the same revision: compare states, not revisions.
      if (heard == current
          || (heard != null && Long.compareUnsigned(heard.snapshot.revision(), current.snapshot.revision()) > 0)) {
        continue;
      }
      InstancesDiff diff = InstancesDiff.between(
          heard == null ? List.of() : heard.snapshot.instances(), current.snapshot.instances());
      r.heard = current;
      if (heard != null && diff.isEmpty() && heard.emptyPushIgnored == current.emptyPushIgnored
          && heard.snapshot.protectThresholdReached() == current.snapshot.protectThresholdReached()) {
        continue; // nothing this listener can see changed
      }
      try {
        r.listener.onEvent(event(current, diff));
      } catch (RuntimeException | Error e) {
        if (e instanceof VirtualMachineError) {
          throw e;
        }
        log.warn("Listener {} of {} threw on revision {}; other listeners are unaffected",
            r.listener, key, current.snapshot.revision(), e);
      }
    }
  }

  private int indexOf(Listener listener) {
    for (int i = 0; i < receivers.size(); i++) {
      if (receivers.get(i).listener == listener) {
        return i;
      }
    }
    return -1;
  }

  private InstancesChangeEvent event(State s, InstancesDiff diff) {
    return new InstancesChangeEvent(key.namespace(), key.group(), key.name(), s.snapshot.instances(),
        diff.added(), diff.removed(), diff.modified(), s.snapshot.revision(), s.emptyPushIgnored,
        s.snapshot.protectThresholdReached());
  }
}
