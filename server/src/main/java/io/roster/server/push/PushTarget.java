package io.roster.server.push;

import java.util.Set;

/**
 * A receiver of pushes for one service: a session's subscription or a Registry/Watch call.
 * Implementations must be thread-safe and must not block in {@link #offer}.
 */
public interface PushTarget {

  /** Clusters this target wants; empty means all. */
  Set<String> clusters();

  /** Hands over a newer state; the target sends it when its stream is ready. */
  void offer(PushPayload payload);
}
