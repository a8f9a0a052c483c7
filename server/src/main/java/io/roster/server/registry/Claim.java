package io.roster.server.registry;

import java.util.Objects;

/**
 * Which client, and which of its sessions, made a registration: {@code hello.client_id} and
 * {@code hello.session_seq}. A client's newer session wins over its older ones: a registration
 * the client made through a session it has already left (a cluster member's log may take it after
 * the new session's) does not take the instance back from the newer session (docs/decisions.md,
 * record 31).
 *
 * @param clientId the client's id; empty: unknown
 * @param seq grows with every session of that client; 0: unknown
 */
public record Claim(String clientId, long seq) {

  /** A registration nobody claimed (operators, tests, clients that send no seq). */
  public static final Claim NONE = new Claim("", 0);

  public Claim {
    Objects.requireNonNull(clientId, "clientId");
  }

  /** Whether this claim is by the same client as {@code other}, from a newer session. */
  public boolean newerThan(Claim other) {
    return seq > 0 && other.seq > 0 && seq > other.seq && !clientId.isEmpty() && clientId.equals(other.clientId);
  }
}
