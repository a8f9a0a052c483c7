package io.roster.server.session;

import java.util.Map;

/** Who a session is, from its hello and its transport. Immutable. */
public record SessionInfo(
    String connectionId,
    String clientId,
    String namespace,
    String clientName,
    String clientVersion,
    Map<String, String> labels,
    String remoteAddress,
    long connectedAtMillis) {

  public SessionInfo {
    labels = Map.copyOf(labels);
  }
}
