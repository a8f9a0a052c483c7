package io.roster.server.push;

import io.roster.server.model.ServiceKey;
import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * The outbound pushes of one session: for each service at most one unsent state (the
 * latest), sent only while the stream is ready; each sent push waits for its ack and is sent
 * again (in its latest version) when the ack does not come within the ack timeout.
 *
 * <p>Memory per session is therefore bounded by the number of services it subscribes to,
 * however slow or dead the reader is. Revisions sent for one service only move forward.
 * Everything known about one service lives in one {@link Slot}, so that an idle session with
 * one subscription costs a few hundred bytes (there is one queue per connection).
 *
 * <p>Thread-safe: every method takes the queue's lock, and writes to the {@link Outbound}
 * happen under it, so they are serialised.
 */
public final class PushQueue {

  private static final long NONE = Long.MIN_VALUE;

  private final Outbound outbound;
  private final Scheduler scheduler;
  private final @Nullable Duration ackTimeout;
  private final @Nullable DeltaPushes deltas;
  private final PushCounters counters;

  private final Map<ServiceKey, Slot> slots = new HashMap<>(4);
  /** Slots with an unsent state, oldest first. A slot is in it exactly when {@code queued}. */
  private final ArrayDeque<Slot> ready = new ArrayDeque<>(2);
  /**
   * The slots of every push an ack may still match, by push id: sent and unacked, or moved back
   * to pending by the ack timer. An ack is a lookup here, whatever the number of subscriptions.
   * Usually one slot per id; several when services share a revision (every service that does
   * not exist is pushed at the registry's absent revision), and one ack then clears them all.
   */
  private final Map<String, List<Slot>> awaitingAck = new HashMap<>(4);
  private final List<AckWaiter> waiters = new ArrayList<>(0);
  private Scheduler.@Nullable Cancellable ackTimer;
  private long sent;
  private long sentDeltas;
  private long resent;
  private long resyncs;
  private boolean closed;

  /** Where this queue writes: the session's transport. */
  public Outbound outbound() {
    return outbound;
  }

  /**
   * @param ackTimeout how long a push may stay unacked before it is sent again; {@code null}
   *     for targets that never ack (Registry/Watch)
   */
  public PushQueue(Outbound outbound, Scheduler scheduler, @Nullable Duration ackTimeout) {
    this(outbound, scheduler, ackTimeout, null);
  }

  /**
   * @param deltas where deltas come from, for a session that takes them; {@code null} to send
   *     every state in full. A state is sent as a delta against the last state of its service
   *     the client acked, when {@link DeltaPushes#choose} finds one.
   */
  public PushQueue(Outbound outbound, Scheduler scheduler, @Nullable Duration ackTimeout,
      @Nullable DeltaPushes deltas) {
    this(outbound, scheduler, ackTimeout, deltas, new PushCounters());
  }

  /** Same, counting what it does in {@code counters} (the server's, shared by every queue). */
  public PushQueue(Outbound outbound, Scheduler scheduler, @Nullable Duration ackTimeout,
      @Nullable DeltaPushes deltas, PushCounters counters) {
    this.counters = counters;
    this.outbound = outbound;
    this.scheduler = scheduler;
    this.ackTimeout = ackTimeout;
    this.deltas = ackTimeout == null ? null : deltas; // a delta needs acks to have a base
  }

  /** Queues a state of {@code service}, replacing any unsent one; ignores older revisions. */
  public synchronized void offer(ServiceKey service, PushPayload payload) {
    if (closed) {
      return;
    }
    Slot slot = slots.computeIfAbsent(service, k -> new Slot());
    if (slot.lastOffered != NONE && payload.revision() <= slot.lastOffered) {
      return;
    }
    if (slot.lastOffered == NONE) {
      slot.firstOffered = payload.revision();
    }
    slot.lastOffered = payload.revision();
    queue(slot, payload);
    drain();
  }

  /**
   * This queue as the push target of one service's subscription: what the {@link PushEngine}
   * fans out to, so that a push goes from the engine to this queue without leaving the package.
   */
  public PushTarget target(ServiceKey service, Set<String> clusters) {
    return new QueueTarget(this, service, Set.copyOf(clusters));
  }

  /** The stream became writable again. */
  public synchronized void onReady() {
    drain();
  }

  /** The client applied the push with this id. Returns whether any push was waiting for it. */
  public synchronized boolean ack(String pushId) {
    return ack(pushId, false);
  }

  /**
   * An ack; with {@code resync} the client says it could not apply the delta this push carried
   * (its state is not the delta's base), so it is no ack: the service's state is sent again at
   * once, in full, and in full until the client acks a state again.
   */
  public synchronized boolean ack(String pushId, boolean resync) {
    if (resync) {
      return resync(pushId);
    }
    List<Slot> slots = awaitingAck.remove(pushId);
    if (slots == null) {
      return false;
    }
    boolean matched = false;
    long change = NONE; // the revision acked, when it carried a change rather than a first state
    for (Slot slot : slots) {
      slot.fullOnly = false; // what it acked was sent in full, or applied as a delta
      long acked = NONE;
      if (slot.inflight != null && slot.inflight.pushId().equals(pushId)) {
        acked = slot.inflight.revision();
        slot.inflight = null;
      }
      // The ack timer may have moved the push back to pending for a re-send before this ack
      // came: the client has it, so the re-send is not needed and the ack counts.
      if (slot.pending != null && slot.pending.pushId().equals(pushId)) {
        acked = slot.pending.revision();
        slot.pending = null;
        dequeue(slot);
      }
      if (acked != NONE) {
        slot.acked(acked);
        matched = true;
        change = acked > slot.firstOffered ? acked : change;
      }
    }
    if (matched) {
      counters.acks.increment();
      if (change != NONE) {
        counters.changeAcked(change);
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
    Slot slot = slots.get(service);
    if (closed || slot == null) {
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
    Slot slot = slots.get(service);
    return slot != null && slot.lastAcked != NONE && slot.lastAcked >= revision;
  }

  /** Drops everything about {@code service} (unsubscribed). */
  public synchronized void forget(ServiceKey service) {
    Slot slot = slots.remove(service);
    if (slot != null) {
      forgetAck(slot, slot.inflight);
      forgetAck(slot, slot.pending);
      slot.pending = null;
      slot.inflight = null;
      dequeue(slot);
    }
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
    int n = 0;
    for (Slot slot : slots.values()) {
      n += slot.inflight != null ? 1 : 0;
    }
    return n;
  }

  /** States waiting for the stream to become ready. */
  public synchronized int pendingCount() {
    int n = 0;
    for (Slot slot : slots.values()) {
      n += slot.pending != null ? 1 : 0;
    }
    return n;
  }

  /** Entries in the line of slots waiting to be sent (tests: it must never outgrow the subscriptions). */
  synchronized int lineLength() {
    return ready.size();
  }

  private boolean resync(String pushId) {
    List<Slot> slots = awaitingAck.get(pushId);
    if (slots == null || closed) {
      return false;
    }
    resyncs++;
    counters.resyncs.increment();
    // Only deltas are answered with resync, and only states with instances go as deltas, so
    // the id names one service here; every slot it names gets its state in full.
    for (Slot slot : List.copyOf(slots)) {
      slot.fullOnly = true;
      if (slot.inflight != null && slot.inflight.pushId().equals(pushId) && slot.pending == null) {
        queue(slot, slot.inflight); // still awaited: its ack, once it arrives in full, counts
        slot.inflight = null;
      }
    }
    drain();
    return true;
  }

  /** Pushes sent as deltas so far. */
  public synchronized long sentDeltaCount() {
    return sentDeltas;
  }

  /** Deltas the client could not apply (acked with {@code resync}) so far. */
  public synchronized long resyncCount() {
    return resyncs;
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
    for (Slot slot : slots.values()) {
      if (slot.pending != null) {
        counters.closed.increment();
      }
      slot.pending = null;
      slot.inflight = null;
    }
    ready.clear();
    awaitingAck.clear();
    for (AckWaiter w : waiters) {
      w.future.complete(false);
    }
    waiters.clear();
    if (ackTimer != null) {
      ackTimer.cancel();
      ackTimer = null;
    }
  }

  /** Makes {@code payload} the slot's unsent state, keeping the slot's place in line if it has one. */
  private void queue(Slot slot, PushPayload payload) {
    if (slot.pending != null && slot.pending != slot.inflight && slot.pending != payload) {
      forgetAck(slot, slot.pending); // a re-send waiting in line, replaced by a newer state
    }
    if (slot.pending != null && slot.pending != payload) {
      counters.superseded.increment();
    }
    slot.pending = payload;
    if (!slot.queued) {
      slot.queued = true;
      ready.add(slot);
    }
  }

  private void dequeue(Slot slot) {
    if (slot.queued) {
      slot.queued = false;
      ready.remove(slot); // linear in the slots waiting, which are at most the subscriptions
    }
  }

  /** No ack can match {@code p} of {@code slot} any more (it was replaced or dropped). */
  private void forgetAck(Slot slot, @Nullable PushPayload p) {
    if (p == null) {
      return;
    }
    List<Slot> slots = awaitingAck.get(p.pushId());
    if (slots != null && slots.remove(slot) && slots.isEmpty()) {
      awaitingAck.remove(p.pushId());
    }
  }

  /** {@code slot} now waits for an ack of {@code p}. */
  private void awaitAck(Slot slot, PushPayload p) {
    List<Slot> slots = awaitingAck.computeIfAbsent(p.pushId(), id -> new ArrayList<>(1));
    if (!slots.contains(slot)) {
      slots.add(slot);
    }
  }

  /** A copy of every slot waiting for an ack (a slot moved back to pending is listed once per id). */
  private List<Slot> awaitingSlots() {
    List<Slot> all = new ArrayList<>(awaitingAck.size());
    for (List<Slot> slots : awaitingAck.values()) {
      all.addAll(slots);
    }
    return all;
  }

  private void drain() {
    while (!closed && !ready.isEmpty() && outbound.isReady()) {
      Slot slot = ready.poll();
      slot.queued = false;
      PushPayload p = slot.pending;
      if (p == null) {
        continue; // cannot happen: a slot leaves the line when its state goes away
      }
      slot.pending = null;
      PushPayload wire = deltas == null || slot.fullOnly || slot.lastAcked == NONE ? p : deltas.choose(p, slot.lastAcked);
      counters.bytes.add(outbound.send(wire));
      sent++;
      if (wire != p) {
        sentDeltas++;
        counters.delta.increment();
      } else {
        counters.full.increment();
      }
      if (ackTimeout != null) {
        if (slot.inflight != null && slot.inflight != p) {
          forgetAck(slot, slot.inflight); // superseded: only the newest push of a service is awaited
        }
        slot.inflight = p;
        slot.sentAtNanos = scheduler.nanoTime();
        awaitAck(slot, p);
      }
    }
    armAckTimer();
  }

  private void armAckTimer() {
    if (ackTimeout == null || ackTimer != null || closed || awaitingAck.isEmpty()) {
      return;
    }
    boolean any = false;
    long oldest = 0;
    for (List<Slot> slots : awaitingAck.values()) {
      for (Slot slot : slots) {
        if (slot.inflight != null && (!any || slot.sentAtNanos - oldest < 0)) {
          oldest = slot.sentAtNanos;
          any = true;
        }
      }
    }
    if (!any) {
      return;
    }
    long delay = Math.max(0, oldest + ackTimeout.toNanos() - scheduler.nanoTime());
    ackTimer = scheduler.schedule(this::onAckTimer, Duration.ofNanos(delay));
  }

  private synchronized void onAckTimer() {
    ackTimer = null;
    if (closed || ackTimeout == null) {
      return;
    }
    long now = scheduler.nanoTime();
    for (Slot slot : awaitingSlots()) {
      if (slot.inflight != null && now - slot.sentAtNanos >= ackTimeout.toNanos()) {
        if (slot.pending == null) {
          queue(slot, slot.inflight); // still awaited: an ack of it counts until it is replaced
        } else {
          forgetAck(slot, slot.inflight); // a newer unsent state already waiting is the re-send
        }
        slot.inflight = null;
        resent++;
        counters.resends.increment();
      }
    }
    drain();
  }

  /** What the queue knows of one service. Guarded by the queue's lock. */
  private static final class Slot {
    @Nullable PushPayload pending;   // latest unsent state, or null
    @Nullable PushPayload inflight;  // sent and not acked yet, or null
    long sentAtNanos;
    long firstOffered = NONE; // the subscription's first state: acking it is no change arriving
    long lastOffered = NONE;
    long lastAcked = NONE;
    boolean queued;        // in the ready queue
    boolean fullOnly;      // the client could not apply a delta: full states until it acks

    void acked(long revision) {
      if (lastAcked == NONE || revision > lastAcked) {
        lastAcked = revision;
      }
    }
  }

  private record AckWaiter(ServiceKey service, long revision, CompletableFuture<Boolean> future) {}
}
