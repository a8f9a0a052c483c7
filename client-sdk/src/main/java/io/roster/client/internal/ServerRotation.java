package io.roster.client.internal;

import io.roster.client.RosterException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which server of the list the connect loop tries next: the configured servers in their circular
 * order, from where the last attempt left off, unless a server was suggested (by a leaving server,
 * or a move that lost its old session), which goes first, once.
 *
 * <p>Owned by the {@link ConnectionManager}; its log lines come from that class's logger. Changed only in the client's {@link SerialContext};
 * {@link #preferredOrder} reads from any thread (a hint, whose parts may be a moment apart).
 */
final class ServerRotation {

  private static final Logger log = LoggerFactory.getLogger(ConnectionManager.class);

  private final List<ServerAddress> addresses;
  private volatile int nextIndex;
  private volatile @Nullable ServerAddress suggested;

  ServerRotation(List<ServerAddress> addresses) {
    this.addresses = List.copyOf(addresses);
  }

  /** The configured servers. */
  List<ServerAddress> addresses() {
    return addresses;
  }

  /** In the context: the server of the next attempt: the suggested one, else the next of the list. */
  ServerAddress next() {
    ServerAddress s = suggested;
    if (s != null) {
      suggested = null;
      return s;
    }
    ServerAddress address = addresses.get(nextIndex);
    nextIndex = (nextIndex + 1) % addresses.size();
    return address;
  }

  /** In the context: the next attempt goes to {@code address} first (null: the next of the list). */
  void suggest(@Nullable ServerAddress address) {
    suggested = address;
  }

  /** Servers in the order a one-off call should try them: {@code connected} (or the next) first. */
  List<ServerAddress> preferredOrder(@Nullable ServerAddress connected) {
    ServerAddress next = suggested;
    int index = nextIndex;
    ServerAddress first = connected != null ? connected : next != null ? next : addresses.get(index);
    List<ServerAddress> order = new ArrayList<>(addresses.size() + 1);
    order.add(first);
    for (int i = 0; i < addresses.size(); i++) {
      ServerAddress a = addresses.get((index + i) % addresses.size());
      if (!a.equals(first)) {
        order.add(a);
      }
    }
    return order;
  }

  /**
   * In the context: where a client leaving {@code leaving} may move, each address at most once:
   * the {@code proposal} first, then the list from where it stands, never the leaving one.
   */
  Set<ServerAddress> candidates(ServerAddress leaving, @Nullable ServerAddress proposal) {
    Set<ServerAddress> candidates = new LinkedHashSet<>();
    if (proposal != null) {
      candidates.add(proposal);
    }
    for (int i = 0; i < addresses.size(); i++) {
      ServerAddress a = addresses.get((nextIndex + i) % addresses.size());
      if (!a.equals(leaving)) {
        candidates.add(a);
      }
    }
    return candidates;
  }

  /**
   * In the context: the next attempt, after a break from {@code leaving}, goes to {@code proposal},
   * else to the next address of the list that is not the leaving one, when there is one.
   *
   * @return whether that next attempt goes to another server than the leaving one
   */
  boolean leave(ServerAddress leaving, @Nullable ServerAddress proposal) {
    suggested = proposal;
    if (proposal == null && addresses.get(nextIndex).equals(leaving)) {
      nextIndex = (nextIndex + 1) % addresses.size(); // the next address, not the leaving one
    }
    return proposal != null || !addresses.get(nextIndex).equals(leaving);
  }

  /**
   * The server a leaving one suggested, parsed; null when none was given, it is the leaving one,
   * or it is unusable (logged).
   */
  @Nullable ServerAddress proposal(String suggestedServer, ServerAddress leaving) {
    if (suggestedServer.isEmpty()) {
      return null;
    }
    try {
      ServerAddress proposal = ServerAddress.parse(suggestedServer);
      return proposal.equals(leaving) ? null : proposal;
    } catch (RosterException e) {
      log.warn("Ignoring an unusable suggested server '{}'", suggestedServer);
      return null;
    }
  }
}
