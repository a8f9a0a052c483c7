package io.roster.server.push;

import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import org.jspecify.annotations.Nullable;

/**
 * Waits for a set of subscribers to ack a change, up to a timeout, and reports once: how many
 * were notified, acked, went away first, or had not acked when the time was up. Used by
 * drain, where a provider wants to know that its consumers have stopped seeing it.
 *
 * <p>Never blocks a thread: the result completes on the {@link Scheduler}, as soon as every
 * subscriber has answered or at the timeout, whichever comes first.
 */
public final class AckCollector {

  /** What a wait for acks achieved; {@code notified = acked + timedOut + disconnected}. */
  public record Counts(int notified, int acked, int timedOut, int disconnected) {}

  private final List<CompletableFuture<Boolean>> acks;
  private final CompletableFuture<Counts> result = new CompletableFuture<>();
  private final AtomicInteger remaining;
  private Scheduler.@Nullable Cancellable timer;
  private boolean finished; // guarded by this

  private AckCollector(List<CompletableFuture<Boolean>> acks) {
    this.acks = acks;
    this.remaining = new AtomicInteger(acks.size());
  }

  /** Starts waiting for {@code acks}; the future completes within {@code timeout}. */
  public static CompletableFuture<Counts> collect(List<CompletableFuture<Boolean>> acks, Duration timeout,
      Scheduler scheduler) {
    return collect(acks, timeout, scheduler, acked -> { });
  }

  /**
   * The same, telling {@code onAck} how many have acked so far each time one more has (on the
   * scheduler's thread, before the result completes).
   */
  public static CompletableFuture<Counts> collect(List<CompletableFuture<Boolean>> acks, Duration timeout,
      Scheduler scheduler, IntConsumer onAck) {
    AckCollector c = new AckCollector(List.copyOf(acks));
    AtomicInteger acked = new AtomicInteger();
    if (acks.isEmpty()) {
      c.finish();
      return c.result;
    }
    synchronized (c) {
      c.timer = scheduler.schedule(c::finish, timeout);
    }
    for (CompletableFuture<Boolean> f : c.acks) {
      f.whenComplete((ok, error) -> {
        if (Boolean.TRUE.equals(ok)) {
          int n = acked.incrementAndGet();
          scheduler.execute(() -> onAck.accept(n));
        }
        if (c.remaining.decrementAndGet() == 0) {
          // Possibly under a push queue's lock: hand over to the scheduler.
          scheduler.execute(c::finish);
        }
      });
    }
    return c.result;
  }

  private void finish() {
    int acked = 0;
    int gone = 0;
    int late = 0;
    synchronized (this) {
      if (finished) {
        return;
      }
      finished = true;
      if (timer != null) {
        timer.cancel();
      }
      for (CompletableFuture<Boolean> f : acks) {
        if (!f.isDone() || f.isCompletedExceptionally()) {
          late++;
          f.cancel(false); // the queue forgets the waiter
        } else if (f.join()) {
          acked++;
        } else {
          gone++;
        }
      }
    }
    result.complete(new Counts(acks.size(), acked, late, gone));
  }
}
