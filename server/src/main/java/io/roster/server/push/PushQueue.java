package io.roster.server.push;

import io.roster.server.model.ServiceKey;
import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The outbound pushes of one session: for each service at most one unsent state (the
 * latest), sent only while the stream is ready; each sent push waits for its ack and is sent
 * again (in its latest version) when the ack does not come within the ack timeout.
 *
 * <p>Memory per session is therefore bounded by the number of services it subscribes to,
 * however slow or dead the reader is. Revisions sent for one service only move forward.
 *
 * <p>Thread-safe: every method takes the queue's lock, and writes to the {@link Outbound}
 * happen under it, so they are serialised.
 */
public final class PushQueue {

  private final Outbound outbound;
  private final Scheduler scheduler;
  private final Duration ackTimeout;

  private final LinkedHashMap<ServiceKey, PushPayload> pending = new LinkedHashMap<>();
  private final Map<ServiceKey, Inflight> inflight = new HashMap<>();
  private final Map<ServiceKey, Long> lastOffered = new HashMap<>();
  private final Map<ServiceKey, Long> lastAcked = new HashMap<>();
  private final List<AckWaiter> waiters = new ArrayList<>();
  private Scheduler.Cancellable ackTimer;
  private long sent;
  private long resent;
  private boolean closed;

  /**
   * @param ackTimeout how long a push may stay unacked before it is sent again; {@code null}
   *     for targets that never ack (Registry/Watch)
   */
  public PushQueue(Outbound outbound, Scheduler scheduler, Duration ackTimeout) {
    this.outbound = outbound;
    this.scheduler = scheduler;
    this.ackTimeout = ackTimeout;
  }

  /** Queues a state of {@code service}, replacing any unsent one; ignores older revisions. */
  public synchronized void offer(ServiceKey service, PushPayload payload) {
    if (closed) {
      return;
    }
    Long last = lastOffered.get(service);
    if (last != null && payload.revision() <= last) {
      return;
    }
    lastOffered.put(service, payload.revision());
    pending.put(service, payload);
    drain();
  }

  /** The stream became writable again. */
  public synchronized void onReady() {
    drain();
  }

  /** The client applied the push with this id. Returns whether any push was waiting for it. */
  public synchronized boolean ack(String pushId) {
    boolean matched = false;
    Iterator<Map.Entry<ServiceKey, Inflight>> it = inflight.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<ServiceKey, Inflight> e = it.next();
      if (e.getValue().payload.pushId().equals(pushId)) {
        it.remove();
        lastAcked.merge(e.getKey(), e.getValue().payload.revision(), Math::max);
        matched = true;
      }
    }
    // The ack timer may have moved the push back to pending for a re-send before this ack
    // came: the client has it, so the re-send is not needed and the ack counts.
    Iterator<Map.Entry<ServiceKey, PushPayload>> waiting = pending.entrySet().iterator();
    while (waiting.hasNext()) {
      Map.Entry<ServiceKey, PushPayload> e = waiting.next();
      if (e.getValue().pushId().equals(pushId)) {
        waiting.remove();
        lastAcked.merge(e.getKey(), e.getValue().revision(), Math::max);
        matched = true;
      }
    }
    if (matched && !waiters.isEmpty()) {
      waiters.removeIf(w -> w.future.isDone() || (acked(w.service, w.revision) && w.future.complete(true)));
    }
    return matched;
  }

  /**
   * Completes with {@code true} once the client has acked a push of {@code service} at
   * {@code revision} or later, or with {@code false} when that can no longer happen (the
   * session closed or unsubscribed). Cancel the future to stop waiting.
   */
  public synchronized CompletableFuture<Boolean> whenAcked(ServiceKey service, long revision) {
    if (closed || !lastOffered.containsKey(service) && !pending.containsKey(service)) {
      // Not subscribed (any more): nothing will ever be acked.
      return CompletableFuture.completedFuture(closed ? false : acked(service, revision));
    }
    if (acked(service, revision)) {
      return CompletableFuture.completedFuture(true);
    }
    waiters.removeIf(w -> w.future.isDone());
    AckWaiter w = new AckWaiter(service, revision, new CompletableFuture<>());
    waiters.add(w);
    return w.future;
  }

  private boolean acked(ServiceKey service, long revision) {
    Long acked = lastAcked.get(service);
    return acked != null && acked >= revision;
  }

  /** Drops everything about {@code service} (unsubscribed). */
  public synchronized void forget(ServiceKey service) {
    pending.remove(service);
    inflight.remove(service);
    lastOffered.remove(service);
    lastAcked.remove(service);
    Iterator<AckWaiter> it = waiters.iterator();
    while (it.hasNext()) {
      AckWaiter w = it.next();
      if (w.service.equals(service)) {
        w.future.complete(false);
        it.remove();
      }
    }
  }

  /** Pushes sent and not yet acked. */
  public synchronized int unacked() {
    return inflight.size();
  }

  /** States waiting for the stream to become ready. */
  public synchronized int pendingCount() {
    return pending.size();
  }

  /** Pushes written so far, re-sends included. */
  public synchronized long sentCount() {
    return sent;
  }

  /** Re-sends after an ack timeout so far. */
  public synchronized long resentCount() {
    return resent;
  }

  /** Stops timers and drops every queued state. Idempotent. */
  public synchronized void close() {
    closed = true;
    pending.clear();
    inflight.clear();
    for (AckWaiter w : waiters) {
      w.future.complete(false);
    }
    waiters.clear();
    if (ackTimer != null) {
      ackTimer.cancel();
      ackTimer = null;
    }
  }

  private void drain() {
    Iterator<Map.Entry<ServiceKey, PushPayload>> it = pending.entrySet().iterator();
    while (it.hasNext() && !closed && outbound.isReady()) {
      Map.Entry<ServiceKey, PushPayload> e = it.next();
      it.remove();
      outbound.send(e.getValue());
      sent++;
      if (ackTimeout != null) {
        inflight.put(e.getKey(), new Inflight(e.getValue(), scheduler.nanoTime()));
      }
    }
    armAckTimer();
  }

  private void armAckTimer() {
    if (ackTimer != null || inflight.isEmpty() || closed) {
      return;
    }
    long oldest = Long.MAX_VALUE;
    for (Inflight f : inflight.values()) {
      oldest = Math.min(oldest, f.sentAtNanos);
    }
    long delay = Math.max(0, oldest + ackTimeout.toNanos() - scheduler.nanoTime());
    ackTimer = scheduler.schedule(this::onAckTimer, Duration.ofNanos(delay));
  }

  private synchronized void onAckTimer() {
    ackTimer = null;
    if (closed) {
      return;
    }
    long now = scheduler.nanoTime();
    Iterator<Map.Entry<ServiceKey, Inflight>> it = inflight.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<ServiceKey, Inflight> e = it.next();
      if (now - e.getValue().sentAtNanos >= ackTimeout.toNanos()) {
        it.remove();
        // A newer unsent state already waits in pending: that one is the re-send.
        pending.putIfAbsent(e.getKey(), e.getValue().payload);
        resent++;
      }
    }
    drain();
  }

  private record Inflight(PushPayload payload, long sentAtNanos) {}

  private record AckWaiter(ServiceKey service, long revision, CompletableFuture<Boolean> future) {}
}
