package io.roster.client.internal;

import io.roster.client.RosterException;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hellos refused for their credentials (a missing, unknown, expired or removed token): no outage.
 * Owns the last such refusal, kept until a session is welcomed (what the callers waiting for a
 * connection are thrown meanwhile), its WARN (logged once, and again only when its message
 * changes) and the auth back-off, from 1 s doubling to 30 s, which the next attempt waits instead
 * of the reconnect back-off. Its lines come from the {@link ConnectionManager}'s logger, which
 * owns it.
 *
 * <p>Changed only in the client's {@link SerialContext}; {@link #refusal} reads from any thread.
 */
final class AuthRefusals {

  private static final Logger log = LoggerFactory.getLogger(ConnectionManager.class);

  private final Backoff backoff;
  private final Duration max;
  /** The last hello refused for its credentials, until a session is welcomed. */
  private volatile @Nullable RosterException refusal;
  /** The message of the refusal last logged at WARN (the same one is not logged again). */
  private @Nullable String logged;

  /** @param max the longest step of {@code backoff}, which the refusal names */
  AuthRefusals(Backoff backoff, Duration max) {
    this.backoff = backoff;
    this.max = max;
  }

  /** Whether {@code refusal} of a hello is one of its credentials. */
  static boolean isCredentials(RosterException refusal) {
    return refusal.code() == RosterException.Code.UNAUTHENTICATED
        || refusal.code() == RosterException.Code.PERMISSION_DENIED;
  }

  /**
   * In the context: the server at {@code address} refused the hello's credentials. Keeps the
   * refusal for the callers, logs it, and returns how long the next attempt waits.
   */
  Duration refused(ServerAddress address, RosterException refusal) {
    String message = String.valueOf(refusal.getMessage());
    Duration delay = backoff.next();
    this.refusal = new RosterException(refusal.code(), "Roster server " + address + " refused this client's"
        + " credentials: " + message + " (the client tries again within " + max.toSeconds()
        + " s, with the token its token supplier gives then)", refusal.field(), null);
    if (!message.equals(logged)) {
      logged = message;
      log.warn("Roster server {} refused this client's credentials ({}: {}); next attempt in {} ms, at most every {} s",
          address, refusal.code(), message, delay.toMillis(), max.toSeconds());
    } else {
      log.debug("Roster server {} refused this client's credentials again; next attempt in {} ms", address,
          delay.toMillis());
    }
    return delay;
  }

  /** The refusal to throw at a caller waiting for a connection, a copy of the last; or null. */
  @Nullable RosterException refusal() {
    RosterException r = refusal;
    return r == null ? null : new RosterException(r.code(), String.valueOf(r.getMessage()), r.field(), null);
  }

  /** In the context: a session was welcomed; the refusal and the auth back-off are over. */
  void welcomed() {
    backoff.reset();
    refusal = null;
    logged = null;
  }
}
