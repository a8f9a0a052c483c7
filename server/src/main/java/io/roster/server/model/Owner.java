package io.roster.server.model;

import java.util.Objects;

/**
 * Who holds a registration (docs/cluster.md, "Owners"): the member that holds it, the kind of
 * owner and the owner's id within that kind. A session's owner is (this node's id, {@link Kind#SESSION}, its
 * connection id). Ending an owner removes everything it holds, whatever its kind.
 *
 * <p>Immutable; equal owners are the same owner.
 *
 * @param nodeId the member that holds the owner (empty when no id is known yet, e.g. in unit
 *     tests of a lone registry)
 * @param kind what sort of owner it is
 * @param id the owner's id within its node and kind (for a session, its connection id)
 */
public record Owner(String nodeId, Kind kind, String id) {

  /** The sorts of owners. {@link #LEASE} is reserved for the HTTP adapter. */
  public enum Kind {
    /** A Roster {@code Session/Connect} stream. */
    SESSION,
    /** A Nacos 2.x gRPC connection (the {@code nacos} adapter): one HTTP/2 transport. */
    NACOS,
    /** An HTTP heartbeat instance of the v1 API (reserved for the HTTP adapter). */
    LEASE,
    /**
     * No owner at all: the persistent instances, registered once and kept until deregistered
     * (docs/persistence.md). Nothing ends it; {@link #PERSISTENT} is its one owner.
     */
    PERSISTENT
  }

  /** The owner of every persistent instance: of no member, never ended. */
  public static final Owner PERSISTENT = new Owner("", Kind.PERSISTENT, "persistent");

  public Owner {
    Objects.requireNonNull(nodeId, "nodeId");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(id, "id");
    if (id.isEmpty()) {
      throw new IllegalArgumentException("owner id: \"\" (expected: a non-empty id)");
    }
  }

  /** The owner that a session (a connection) on node {@code nodeId} is. */
  public static Owner session(String nodeId, String connectionId) {
    return new Owner(nodeId, Kind.SESSION, connectionId);
  }

  /** The owner that a Nacos 2.x connection (one HTTP/2 transport) on node {@code nodeId} is. */
  public static Owner nacos(String nodeId, String connectionId) {
    return new Owner(nodeId, Kind.NACOS, connectionId);
  }

  @Override
  public String toString() {
    return kind.name().toLowerCase(java.util.Locale.ROOT) + ":" + id + "@" + nodeId;
  }
}
