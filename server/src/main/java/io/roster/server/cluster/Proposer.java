package io.roster.server.cluster;

import io.roster.proto.cluster.v1.Batch;
import io.roster.server.model.RegistryException;
import io.roster.server.registry.Command;
import io.roster.server.registry.Writer;
import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * This member's {@link Writer}: group commit. Commands from all of this member's sessions are
 * queued; the first one opens a window ({@code --group-commit-window}, 1 ms by default), and at
 * its end everything queued (up to a size cap) goes to the log as one {@link Batch}: one entry,
 * one round of consensus, for all of them. A request completes when this member has applied the
 * entry, so what a client wrote is visible to its next query here.
 *
 * <p>Order: commands are batched in submission order and batches are sent in order on one
 * ordered Ratis client, so one session's changes are applied in the order it made them.
 *
 * <p>Bounded: at most {@code maxQueued} commands wait for a window; beyond that, and while this
 * member cannot reach a majority, a submit is refused at once with UNAVAILABLE (clients go
 * elsewhere or retry). Thread-safe.
 */
final class Proposer implements Writer {

  /** One entry's size cap, well under the log's message limit. */
  static final int MAX_BATCH_BYTES = 1 << 20;
  static final int MAX_BATCH_COMMANDS = 2_000;
  /**
   * Entries of this member in the log's pipeline at once. While one is, changes gather for the
   * next entry: under load, entries grow instead of multiplying, and each registration costs a
   * fraction of a consensus round. One, not two: a member's cost is per entry, so fewer, larger
   * entries cost less CPU per registration, and a lone change still goes after one window
   * (decision 52; figures in docs/benchmarks.md).
   */
  static final int MAX_IN_FLIGHT_BATCHES = 1;
  /** How soon an owner's end that the log did not take is proposed again. */
  static final Duration RETRY_ENDS_AFTER = Duration.ofSeconds(1);

  /**
   * This member is stopping and its grace is over: the sessions still here are cut, but their
   * owners' ends are not proposed from now on. Their clients are alive (they were connected a
   * moment ago) and will redo through another member; the leader ends what has not moved within
   * {@code --member-grace}, as for any member that is down (decision 48).
   */
  void keepOwners() {
    keepOwners = true;
  }

  /** Sends one entry's bytes; the future fails when it could not be committed. */
  interface Log {
    CompletableFuture<?> send(byte[] entry);
  }

  private final String member;
  private final String incarnation;
  private final Log logClient;
  private final Scheduler timer;
  private final Duration window;
  private final int maxQueued;
  private final LongSupplier wallMicros;
  /** Null when writes are possible, else why not (this member is cut off, or catching up). */
  private final Supplier<String> unwritable;
  /** True while this member holds back owners' ends (stalled, cut off, or just back from either). */
  private final BooleanSupplier holdEnds;

  // Guarded by this.
  private final ArrayDeque<Pending> queue = new ArrayDeque<>();
  private boolean flushScheduled;
  /** A flush found the pipeline full: the next applied (or failed) entry flushes. */
  private boolean waitingForSlot;
  private long sequence;
  private volatile boolean closed;
  /** Set once this stopping member cuts its last sessions: their owners' ends stay out of the log. */
  private volatile boolean keepOwners;

  /** Batches sent and not yet applied here, by sequence. */
  private final Map<Long, List<Pending>> inFlight = new ConcurrentHashMap<>();

  /**
   * Why a change sent to this member failed before it reached the log, each counted from zero for
   * the server's metrics: {@code unwritable} (this member said it cannot write), {@code queue_full}
   * (too many changes waiting), {@code not_taken} (the log did not take its entry), {@code stopped}
   * (this member stopped with it waiting).
   */
  static final List<String> FAILURE_REASONS = List.of("unwritable", "queue_full", "not_taken", "stopped");

  private final java.util.Map<String, java.util.concurrent.atomic.LongAdder> failures = new java.util.LinkedHashMap<>();

  Proposer(String member, String incarnation, Log logClient, Scheduler timer, Duration window,
      int maxQueued, LongSupplier wallMicros, Supplier<String> unwritable, BooleanSupplier holdEnds) {
    this.member = member;
    FAILURE_REASONS.forEach(r -> failures.put(r, new java.util.concurrent.atomic.LongAdder()));
    this.incarnation = incarnation;
    this.logClient = logClient;
    this.timer = timer;
    this.window = window;
    this.maxQueued = maxQueued;
    this.wallMicros = wallMicros;
    this.unwritable = unwritable;
    this.holdEnds = holdEnds;
  }

  private volatile java.util.function.LongConsumer committed = micros -> { };

  /**
   * {@inheritDoc}
   *
   * <p>The end of an owner ({@link Command.RemoveOwner}: a session closed) is never refused and
   * never given up: it waits while this member cannot write, and is proposed again after a
   * failure, until the log has it. Otherwise a session that ended while its member was cut off
   * would leave its instances behind once the member is back in time. Right after this member
   * was stalled, an owner's end waits {@link Membership#HOLD_ENDS_AFTER_STALL} before it is queued.
   */
  @Override
  public <R> CompletableFuture<R> submit(Command<R> command) {
    if (command instanceof Command.RemoveOwner && keepOwners) {
      return CompletableFuture.completedFuture(null);
    }
    if (command instanceof Command.RemoveOwner && holdEnds.getAsBoolean()) {
      CompletableFuture<Void> held = new CompletableFuture<>();
      afterHold(() -> held.complete(null));
      return held.thenCompose(x -> propose(LogCodec.encode(command), true));
    }
    return propose(LogCodec.encode(command), command instanceof Command.RemoveOwner);
  }

  /**
   * Proposes a command of the log's own (membership) or an encoded registry command; {@code
   * anyway}: also while this member says it cannot write (its own start, which is how it
   * catches up).
   */
  @SuppressWarnings("unchecked")
  <R> CompletableFuture<R> propose(io.roster.proto.cluster.v1.Command command, boolean anyway) {
    String why = anyway ? null : unwritable.get();
    if (why != null) {
      failed("unwritable", 1);
      throw new RegistryException(RegistryException.Kind.UNAVAILABLE, "", why);
    }
    Pending p = new Pending(command, new CompletableFuture<>());
    boolean schedule;
    synchronized (this) {
      if (queue.size() >= maxQueued) {
        failed("queue_full", 1);
        throw new RegistryException(RegistryException.Kind.UNAVAILABLE, "", "this member has " + queue.size()
            + " changes waiting for the log (limit: " + maxQueued + "); try again or another member");
      }
      queue.add(p);
      schedule = !flushScheduled;
      flushScheduled = true;
    }
    if (schedule) {
      timer.schedule(this::flush, window);
    }
    return (CompletableFuture<R>) p.done;
  }

  /**
   * Sends what is queued as one entry (and schedules the next when more is left), unless {@link
   * #MAX_IN_FLIGHT_BATCHES} are in the pipeline: then the next one goes when one of them is
   * applied here (or fails).
   */
  private void flush() {
    List<Pending> taken = new ArrayList<>();
    Batch.Builder b = Batch.newBuilder().setOrigin(member).setIncarnation(incarnation);
    int format = 1;
    long seq;
    synchronized (this) {
      if (inFlight.size() >= MAX_IN_FLIGHT_BATCHES) {
        waitingForSlot = true;
        flushScheduled = false;
        return;
      }
      int bytes = 0;
      while (!queue.isEmpty() && taken.size() < MAX_BATCH_COMMANDS) {
        Pending next = queue.peek();
        int size = next.command.getSerializedSize();
        if (!taken.isEmpty() && bytes + size > MAX_BATCH_BYTES) {
          break;
        }
        queue.poll();
        taken.add(next);
        bytes += size;
        b.addCommands(next.command);
        format = Math.max(format, LogCodec.formatOf(next.command));
      }
      b.setFormat(format);
      boolean more = !queue.isEmpty();
      flushScheduled = more;
      if (more) {
        timer.execute(this::flush);
      }
      seq = ++sequence;
      b.setSequence(seq).setTimeMicros(wallMicros.getAsLong());
      if (taken.isEmpty()) {
        return;
      }
      inFlight.put(seq, taken);
    }
    byte[] entry = b.build().toByteArray();
    CompletableFuture<?> sent;
    try {
      sent = logClient.send(entry);
    } catch (RuntimeException e) {
      sent = CompletableFuture.failedFuture(e);
    }
    sent.whenComplete((reply, failed) -> {
      if (failed != null) {
        fail(seq, failed);
      }
    });
  }

  /** Told, for each of this member's entries applied here, the microseconds since it was sent to the log. */
  void onCommitted(java.util.function.LongConsumer micros) {
    this.committed = micros;
  }

  /** An entry was applied here: this member's batch completes its requests. */
  void onApplied(Batch batch, List<Object> results) {
    if (!batch.getOrigin().equals(member) || !batch.getIncarnation().equals(incarnation)) {
      return;
    }
    List<Pending> waiting = inFlight.remove(batch.getSequence());
    if (waiting == null) {
      return;
    }
    committed.accept(Math.max(0, wallMicros.getAsLong() - batch.getTimeMicros()));
    slotFreed();
    for (int i = 0; i < waiting.size(); i++) {
      Object r = i < results.size() ? results.get(i) : null;
      if (r instanceof RuntimeException refused) {
        waiting.get(i).done.completeExceptionally(refused);
      } else {
        waiting.get(i).done.complete(r);
      }
    }
  }

  private void fail(long seq, Throwable cause) {
    List<Pending> waiting = inFlight.remove(seq);
    if (waiting == null) {
      return;
    }
    slotFreed();
    RegistryException e = new RegistryException(RegistryException.Kind.UNAVAILABLE, "",
        "the cluster's log did not take this change (" + rootMessage(cause) + "); try again or another member");
    for (Pending p : waiting) {
      if (p.command.hasRemoveOwner() && !closed) {
        timer.schedule(() -> afterHold(() -> requeue(p)), RETRY_ENDS_AFTER);
      } else {
        failed("not_taken", 1);
        p.done.completeExceptionally(e);
      }
    }
  }

  /** An entry left the pipeline: what gathered meanwhile goes now. */
  private void slotFreed() {
    boolean go;
    synchronized (this) {
      go = waitingForSlot && !queue.isEmpty() && !flushScheduled;
      waitingForSlot = false;
      if (go) {
        flushScheduled = true;
      }
    }
    if (go) {
      timer.execute(this::flush);
    }
  }

  /**
   * Runs {@code then} once this member no longer holds the ends of owners (it is not stalled,
   * cut off, or just back: see the {@code holdEnds} supplier), checking every
   * {@link #RETRY_ENDS_AFTER}.
   */
  private void afterHold(Runnable then) {
    if (closed) {
      return;
    }
    if (holdEnds.getAsBoolean()) {
      timer.schedule(() -> afterHold(then), RETRY_ENDS_AFTER);
    } else {
      then.run();
    }
  }

  /** Queues an owner's end again (see {@link #submit}). */
  private void requeue(Pending p) {
    boolean schedule;
    synchronized (this) {
      if (closed) {
        return;
      }
      queue.add(p); // past the bound on purpose: an end must not be lost
      schedule = !flushScheduled;
      flushScheduled = true;
    }
    if (schedule) {
      timer.schedule(this::flush, window);
    }
  }

  /** Fails everything waiting (this member stops). */
  void failAll(String why) {
    List<Pending> left;
    synchronized (this) {
      closed = true;
      left = new ArrayList<>(queue);
      queue.clear();
    }
    inFlight.values().forEach(left::addAll);
    inFlight.clear();
    RegistryException e = new RegistryException(RegistryException.Kind.UNAVAILABLE, "", why);
    failed("stopped", left.size());
    left.forEach(p -> p.done.completeExceptionally(e));
  }

  private void failed(String reason, int changes) {
    java.util.Objects.requireNonNull(failures.get(reason)).add(changes);
  }

  /** Each reason of {@link #FAILURE_REASONS} with the changes that failed for it. */
  void forEachFailure(java.util.function.ObjLongConsumer<String> visitor) {
    failures.forEach((reason, n) -> visitor.accept(reason, n.sum()));
  }

  /** Commands waiting for a window, and batches sent and not yet applied here. */
  synchronized int queued() {
    return queue.size();
  }

  int inFlightBatches() {
    return inFlight.size();
  }

  private static String rootMessage(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null && c.getCause() != c) {
      c = c.getCause();
    }
    return c.getClass().getSimpleName() + (c.getMessage() == null ? "" : ": " + c.getMessage());
  }

  private record Pending(io.roster.proto.cluster.v1.Command command, CompletableFuture<Object> done) {}

}
