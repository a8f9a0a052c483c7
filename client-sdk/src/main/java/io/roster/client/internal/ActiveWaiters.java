package io.roster.client.internal;

import io.roster.client.RosterException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The callers waiting, on their own threads outside the client's {@link SerialContext}, for the
 * active session to change: one per waiting thread. The connection manager signals them from the
 * context whenever the active session, or what the waiters are told, changes. Thread-safe:
 * {@link #await} from any thread outside the context, {@link #signal} in it.
 */
final class ActiveWaiters {

  private final SerialContext context;
  /** Changed only in the context. */
  private final List<CompletableFuture<Void>> waiting = new ArrayList<>();

  ActiveWaiters(SerialContext context) {
    this.context = context;
  }

  /**
   * Waits (real time) until {@code look}, run in the context, finds a session, and returns it; it
   * looks again after every {@link #signal}. {@code look} returns null to wait on, and may throw,
   * which is thrown here.
   *
   * @return the session found, or null when none was within {@code timeout}
   */
  @Nullable Session await(Duration timeout, Supplier<@Nullable Session> look) {
    Deadline deadline = Deadline.after(timeout);
    while (true) {
      CompletableFuture<Void> changed = new CompletableFuture<>();
      Session s = context.call(() -> {
        Session found = look.get();
        if (found == null) {
          waiting.add(changed);
        }
        return found;
      });
      if (s != null) {
        return s;
      }
      long left = deadline.remainingNanos();
      try {
        if (left <= 0) {
          return null;
        }
        changed.get(left, TimeUnit.NANOSECONDS);
      } catch (TimeoutException | ExecutionException e) {
        // Looks once more, then gives up.
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new RosterException(RosterException.Code.UNAVAILABLE,
            "interrupted while waiting for a connection");
      } finally {
        if (!changed.isDone()) {
          context.execute(() -> waiting.removeIf(w -> w == changed));
        }
      }
    }
  }

  /** In the context: wakes the callers waiting for the active session to change. */
  void signal() {
    List<CompletableFuture<Void>> woken = new ArrayList<>(waiting);
    waiting.clear();
    woken.forEach(w -> w.complete(null));
  }
}
