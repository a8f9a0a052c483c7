package io.roster.server.session;

/**
 * The limits on what clients may hold, per client connection (one HTTP/2 connection, however
 * many sessions and Watch calls it carries) and per remote address (every connection from one
 * IP). Each is a server flag; see docs/protocol.md, "Limits".
 *
 * @param instancesPerConnection ephemeral instances the sessions of one connection may own
 * @param subscriptionsPerConnection subscriptions the sessions of one connection may hold
 * @param sessionsPerConnection Connect streams open at once on one connection
 * @param watchesPerConnection Registry/Watch calls open at once on one connection
 * @param sessionsPerAddress Connect streams open at once from one remote address
 * @param instancesPerAddress ephemeral instances the sessions of one remote address may own
 */
public record SessionLimits(
    int instancesPerConnection,
    int subscriptionsPerConnection,
    int sessionsPerConnection,
    int watchesPerConnection,
    int sessionsPerAddress,
    int instancesPerAddress) {

  /** Generous limits for tests and embedding: only the per-connection instance and subscription limits bite. */
  public static SessionLimits of(int instancesPerConnection, int subscriptionsPerConnection) {
    return new SessionLimits(instancesPerConnection, subscriptionsPerConnection, 64, 1024,
        Integer.MAX_VALUE, Integer.MAX_VALUE);
  }
}
