package io.roster.server.push;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * A receiver of pushes for one service: a session's subscription or a Registry/Watch call.
 * Implementations must be thread-safe and must not block in {@link #offer}.
 */
public interface PushTarget {

  /** Clusters this target wants; empty means all. */
  Set<String> clusters();

  /** Hands over a newer state; the target sends it when its stream is ready. */
  void offer(PushPayload payload);

  /**
   * Completes with {@code true} once the receiver has acked {@code revision} (or a later one)
   * of this target's service, with {@code false} once it never will (it went away). Null for
   * targets that do not ack (Registry/Watch). Callbacks may run under the target's locks:
   * they must not block.
   */
  default @Nullable CompletableFuture<Boolean> whenAcked(long revision) {
    return null;
  }
}
