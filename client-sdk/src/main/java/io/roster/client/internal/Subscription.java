package io.roster.client.internal;

import io.roster.client.InstancesChangeEvent;
import io.roster.client.Listener;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One subscribed service: its listeners, its cached state and the queue its events run through.
 *
 * <p>The cache only moves forward: a state is applied only when its revision is greater than
 * the cached one. Listeners hear of a state only when the visible content changed (and once
 * at first). Events are queued in order under the client's lock by the {@code offer}/{@code add}
 * methods and run after the caller released it, via {@link #drainEvents()}.
 *
 * <p>Guarded by the client's lock except where noted.
 */
final class Subscription {

  private static final Logger log = LoggerFactory.getLogger(Subscription.class);

  /** What {@link #offer} did with a state. */
  enum Outcome {
    /** Its revision was not newer than the cached one; nothing changed. */
    STALE,
    /** Newer revision, same visible content; cached without an event. */
    UNCHANGED,
    /** Newer revision with different content (or the first state); an event was queued. */
    CHANGED
  }

  private final ServiceKey key;
  private final List<Listener> listeners = new CopyOnWriteArrayList<>();
  private final SerialExecutor events;
  private volatile boolean active = true;
  private ServiceSnapshot snapshot;

  // Poll state, guarded by the client's lock.
  ScheduledFuture<?> pollTask;
  int pollFailures;

  Subscription(ServiceKey key, Executor listenerExecutor) {
    this.key = key;
    this.events = new SerialExecutor(listenerExecutor);
  }

  ServiceKey key() {
    return key;
  }

  /** The cached state, or null before the first one arrived. */
  ServiceSnapshot snapshot() {
    return snapshot;
  }

  boolean isActive() {
    return active;
  }

  boolean hasListeners() {
    return !listeners.isEmpty();
  }

  /**
   * Adds a listener (once; by identity). When a state is cached, queues an event for that
   * listener alone with the whole list in {@code added}.
   *
   * @return false when the listener was already there
   */
  boolean addListener(Listener listener) {
    if (indexOf(listener) >= 0) {
      return false;
    }
    listeners.add(listener);
    if (snapshot != null) {
      InstancesChangeEvent event = event(snapshot,
          InstancesDiff.between(List.of(), snapshot.instances()));
      queue(event, List.of(listener));
    }
    return true;
  }

  /** Removes a listener (by identity); its queued events are skipped. */
  boolean removeListener(Listener listener) {
    int i = indexOf(listener);
    if (i < 0) {
      return false;
    }
    listeners.remove(i);
    return true;
  }

  /**
   * Applies a state if it is newer than the cached one, queueing an event for the current
   * listeners when the visible content changed or it is the first state.
   */
  Outcome offer(ServiceSnapshot next) {
    ServiceSnapshot previous = snapshot;
    if (previous != null && Long.compareUnsigned(next.revision(), previous.revision()) <= 0) {
      return Outcome.STALE;
    }
    snapshot = next;
    InstancesDiff diff = InstancesDiff.between(
        previous == null ? List.of() : previous.instances(), next.instances());
    if (previous != null && diff.isEmpty()) {
      return Outcome.UNCHANGED;
    }
    queue(event(next, diff), List.copyOf(listeners));
    return Outcome.CHANGED;
  }

  /** Stops the subscription: no more events, queued ones are dropped. */
  void deactivate() {
    active = false;
    events.clear();
    if (pollTask != null) {
      pollTask.cancel(false);
      pollTask = null;
    }
  }

  /** Runs queued events on the listener executor. Call without holding the client's lock. */
  void drainEvents() {
    events.drain();
  }

  private void queue(InstancesChangeEvent event, List<Listener> targets) {
    if (targets.isEmpty()) {
      return;
    }
    events.add(() -> deliver(event, targets));
  }

  private void deliver(InstancesChangeEvent event, List<Listener> targets) {
    for (Listener listener : targets) {
      if (!active || indexOf(listener) < 0) {
        continue; // unsubscribed after the event was queued
      }
      try {
        listener.onEvent(event);
      } catch (RuntimeException | Error e) {
        if (e instanceof VirtualMachineError) {
          throw e;
        }
        log.warn("Listener {} of {} threw on revision {}; other listeners are unaffected",
            listener, key, event.revision(), e);
      }
    }
  }

  private int indexOf(Listener listener) {
    for (int i = 0; i < listeners.size(); i++) {
      if (listeners.get(i) == listener) {
        return i;
      }
    }
    return -1;
  }

  private InstancesChangeEvent event(ServiceSnapshot state, InstancesDiff diff) {
    return new InstancesChangeEvent(key.namespace(), key.group(), key.name(), state.instances(),
        diff.added(), diff.removed(), diff.modified(), state.revision());
  }
}
