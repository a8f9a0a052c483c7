package io.roster.server.registry;

import java.util.Objects;

/**
 * Which client, and which of its sessions, made a registration: {@code hello.client_id} and
 * {@code hello.session_seq}. A client's newer session wins over its older ones: a registration
 * the client made through a session it has already left (a cluster member's log may take it after
 * the new session's) does not take the instance back from the newer session (docs/decisions.md,
 * record 31).
 *
 * <p>With auth on, also the identity that registered it: another identity may not replace it
 * unless it is an admin of the service (decision 65).
 *
 * @param clientId the client's id; empty: unknown
 * @param seq grows with every session of that client; 0: unknown
 * @param identity the name of the identity that registered it; empty with auth off
 * @param admin whether that identity may replace another's registrations (not stored)
 */
public record Claim(String clientId, long seq, String identity, boolean admin) {

  /** A registration nobody claimed (operators, tests, clients that send no seq). */
  public static final Claim NONE = new Claim("", 0);

  public Claim {
    Objects.requireNonNull(clientId, "clientId");
    Objects.requireNonNull(identity, "identity");
  }

  /** A claim with auth off: no identity. */
  public Claim(String clientId, long seq) {
    this(clientId, seq, "", false);
  }

  /** Whether this claim is by the same client as {@code other}, from a newer session. */
  public boolean newerThan(Claim other) {
    return seq > 0 && other.seq > 0 && seq > other.seq && !clientId.isEmpty() && clientId.equals(other.clientId);
  }

  /**
   * Whether a registration of this claim may be replaced by one of {@code other}: always with
   * auth off; otherwise by the same identity or an admin.
   */
  public boolean replaceableBy(Claim other) {
    return identity.isEmpty() || identity.equals(other.identity) || other.admin;
  }

  /** This claim as stored: without {@link #admin}, which holds for one request only. */
  public Claim stored() {
    return admin ? new Claim(clientId, seq, identity, false) : this;
  }
}
