package io.roster.server.session;

import java.util.Map;

/**
 * Who a session is, from its hello and its transport. Immutable.
 *
 * @param sessionSeq {@code hello.session_seq}: grows with each session of the client (0: none)
 */
public record SessionInfo(
    String connectionId,
    String clientId,
    String namespace,
    String clientName,
    String clientVersion,
    Map<String, String> labels,
    String remoteAddress,
    long connectedAtMillis,
    long sessionSeq) {

  public SessionInfo {
    labels = Map.copyOf(labels);
  }

  /** A session whose client sent no session_seq. */
  public SessionInfo(String connectionId, String clientId, String namespace, String clientName, String clientVersion,
      Map<String, String> labels, String remoteAddress, long connectedAtMillis) {
    this(connectionId, clientId, namespace, clientName, clientVersion, labels, remoteAddress, connectedAtMillis, 0);
  }
}
