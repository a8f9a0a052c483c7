package io.roster.client.internal;

import io.roster.client.RosterException;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What the server of a {@link Session} says, in the client's terms: {@link Session#inbound}
 * reads the frames of its stream and calls these, in the stream's order, on the transport's
 * thread. Results are not among them: the session completes its requests itself.
 */
interface SessionEvents {

  /** The server welcomed the session. */
  void welcomed(Session session, Welcomed welcome);

  /** A push arrived. */
  void pushed(Session session, Pushed push);

  /** The server asks this client to move ({@code reconnect}); {@code suggestedServer} may be empty. */
  void reconnectAsked(Session session, String reason, String suggestedServer);

  /** The server said its warm-up is over ({@code warm_up_done}). */
  void warmUpDone(Session session);

  /**
   * The server refused the hello (an error result to it): bad credentials, a malformed hello, a
   * limit. No welcome follows on this stream.
   */
  void refused(Session session, RosterException refusal);

  /** The stream ended; {@code why} says how (the server completed it, or the error). */
  void closed(Session session, String why);

  /**
   * A welcome.
   *
   * @param keepaliveTimeMs the server's keepalive time, 0 when it did not say
   * @param warmUpRemainingMs how much longer the server is warming up, 0 when warm
   */
  record Welcomed(String connectionId, String nodeId, Set<String> features, long keepaliveTimeMs,
      long warmUpRemainingMs) {

    public Welcomed {
      features = Set.copyOf(features);
    }
  }

  /**
   * A push: a full state or a delta.
   *
   * @param key the service it is about
   * @param state the full state, or null for a delta
   * @param delta the delta, or null for a full state
   */
  record Pushed(String pushId, ServiceKey key, @Nullable ServiceSnapshot state, @Nullable Delta delta) {}
}
