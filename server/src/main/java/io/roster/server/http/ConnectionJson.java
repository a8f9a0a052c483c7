package io.roster.server.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.roster.server.session.Session;
import io.roster.server.session.SessionInfo;

/**
 * One connection as both admin APIs show it (Roster's and the Nacos-shaped one, docs/admin-api.md):
 * its ids, namespace, address, client, protocol, when it connected and what it holds. Stateless.
 */
public final class ConnectionJson {

  private ConnectionJson() {}

  /** One connection as the admin APIs show it. */
  public static ObjectNode connection(Session s) {
    ObjectNode o = JsonEnvelope.JSON.createObjectNode();
    SessionInfo i = s.info();
    o.put("connectionId", i.connectionId());
    o.put("clientId", i.clientId());
    o.put("namespace", i.namespace());
    o.put("address", i.remoteAddress());
    o.put("clientName", i.clientName());
    o.put("clientVersion", i.clientVersion());
    o.put("protocol", s.owner().kind() == io.roster.server.model.Owner.Kind.NACOS ? "nacos-grpc" : "roster");
    o.put("connectedAt", i.connectedAtMillis());
    o.put("instanceCount", s.instanceCount());
    o.put("subscriptionCount", s.subscriptionCount());
    o.put("unackedPushes", s.unackedPushes());
    return o;
  }
}
