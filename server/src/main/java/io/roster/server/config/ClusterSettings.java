package io.roster.server.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * This server as a cluster member: the members and which one it is, its peer port and the peer
 * TLS files, and the membership timings ({@code --members}, {@code --node-id}, {@code --peer-*},
 * {@code --member-*}, {@code --balance-settle}, {@code --group-commit-window},
 * {@code --snapshot-every}). Immutable; {@link ServerConfig} checks the bounds.
 */
public record ClusterSettings(String nodeId, String peerHost, int peerPort, List<String> members, String advertise,
    Duration groupCommitWindow, Duration memberDownAfter, Duration memberGrace, Duration balanceSettle,
    long snapshotEvery, boolean peerTls, @Nullable Path peerTlsCert, @Nullable Path peerTlsKey,
    @Nullable Path peerTlsCa) {

  public ClusterSettings {
    Objects.requireNonNull(peerHost, "peerHost");
    members = List.copyOf(members);
  }

  /** Whether this server is a member of a cluster ({@code --members} given). */
  public boolean clustered() {
    return !members.isEmpty();
  }
}
