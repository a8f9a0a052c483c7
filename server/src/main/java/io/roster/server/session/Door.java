package io.roster.server.session;

import java.time.Duration;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One protocol's connections as the server's lifecycle drives them, the same for every
 * protocol: refused for now while a cluster member catches up or is cut off, refused for good
 * once the server stops, all asked to move to another member, and waited for until the last
 * has ended. The Roster protocol's sessions and the Nacos protocol's connections each have one
 * (both built on {@link Admission}); the server drives every door alike.
 */
public interface Door {

  /** Refuses new connections for now ({@code reason}), or accepts them again ({@code null}). */
  void refuse(@Nullable String reason);

  /** Refuses new connections from now on (the server is about to stop); the present ones stay. */
  void refuseNew(String reason);

  /**
   * The server is stopping: new connections are refused, and every connection is asked to move
   * to the server {@code suggest} names for it (a client address {@code host:port}; empty: the
   * client's next server).
   */
  void moveAll(String reason, Supplier<String> suggest);

  /**
   * Waits until every connection has ended after {@link #moveAll}, or {@code timeout}.
   *
   * @return whether they all ended in time
   */
  boolean awaitAllEnded(Duration timeout) throws InterruptedException;
}
