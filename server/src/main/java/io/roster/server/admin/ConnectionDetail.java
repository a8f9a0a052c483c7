package io.roster.server.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.roster.server.http.ConnectionJson;
import io.roster.server.http.HttpException;
import io.roster.server.model.Instance;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Registry;
import io.roster.server.session.Session;
import io.roster.server.session.SessionManager;

/**
 * GET /connection?connectionId=ID: one connection of this member as the list shows it, with the
 * instances it owns (in its namespace: read over the namespace's services, for an operator's
 * page, not a hot path) and the services it subscribes to. Reads the sessions and the registry
 * as they are at that moment; stateless and thread-safe.
 */
final class ConnectionDetail {

  private ConnectionDetail() {}

  static JsonNode of(String connectionId, SessionManager sessions, Registry registry) {
    Session s = sessions.all().stream().filter(x -> x.info().connectionId().equals(connectionId)).findFirst()
        .orElseThrow(() -> new HttpException(404, "connectionId: no connection " + connectionId
            + " on this member (see /roster/v1/admin/connections)"));
    ObjectNode o = ConnectionJson.connection(s);
    ArrayNode instances = o.putArray("instances");
    String namespace = s.info().namespace();
    for (ServiceKey k : registry.listServices(namespace, "", x -> registry.ownedCount(s.owner(), x) > 0, 1,
        Integer.MAX_VALUE).services()) {
      Registry.ServiceImage image = registry.serviceImage(k);
      if (image == null) {
        continue;
      }
      for (Registry.Held h : image.registrations()) {
        if (h.owner().equals(s.owner())) {
          Instance i = h.instance();
          ObjectNode n = instances.addObject();
          n.put("namespaceId", k.namespace());
          n.put("groupName", k.group());
          n.put("serviceName", k.name());
          n.put("ip", i.ip());
          n.put("port", i.port());
          n.put("clusterName", i.cluster());
        }
      }
    }
    ArrayNode subscriptions = o.putArray("subscriptions");
    for (ServiceKey k : s.subscriptions()) {
      ObjectNode n = subscriptions.addObject();
      n.put("namespaceId", k.namespace());
      n.put("groupName", k.group());
      n.put("serviceName", k.name());
    }
    return o;
  }
}
