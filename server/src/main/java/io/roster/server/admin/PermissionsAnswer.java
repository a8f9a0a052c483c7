package io.roster.server.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.roster.server.auth.Grant;
import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.http.HttpRequest;
import io.roster.server.http.JsonEnvelope;
import io.roster.server.http.NamingParams;
import io.roster.server.model.Names;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.NamespaceCount;
import io.roster.server.registry.Registry;
import java.util.TreeSet;

/**
 * GET /permissions: what the caller may do, for a page that shows only what it may use: on every
 * service of a namespace, on one service when {@code serviceName} is given (its grants may name
 * only some services), and which namespaces it may read. Stateless; thread-safe.
 */
final class PermissionsAnswer {

  private PermissionsAnswer() {}

  static JsonNode of(HttpRequest r, Principal p, Registry registry) {
    String namespace = r.param("namespaceId", Names.DEFAULT_NAMESPACE);
    ObjectNode o = JsonEnvelope.JSON.createObjectNode();
    o.put("identity", p.named() ? p.name() : "");
    o.put("namespaceId", namespace);
    o.put("read", p.allowsAll(Permission.READ, namespace));
    o.put("write", p.allowsAll(Permission.WRITE, namespace));
    o.put("admin", p.allowsAll(Permission.ADMIN, namespace));
    o.put("serverAdmin", p.allowsAll(Permission.ADMIN, Grant.ALL));
    if (r.param("serviceName") != null) {
      ServiceKey k = NamingParams.service(namespace, r.param("groupName", Names.DEFAULT_GROUP), r.required("serviceName"));
      ObjectNode s = o.putObject("service");
      s.put("groupName", k.group());
      s.put("serviceName", k.name());
      s.put("read", p.allows(Permission.READ, k.namespace(), k.group(), k.name()));
      s.put("write", p.allows(Permission.WRITE, k.namespace(), k.group(), k.name()));
      s.put("admin", p.allows(Permission.ADMIN, k.namespace(), k.group(), k.name()));
    }
    // The namespaces whose service list the caller may read: those created or with a service, and this one.
    TreeSet<String> readable = new TreeSet<>();
    for (NamespaceCount n : registry.namespaceBook().list()) {
      if (p.allowsAll(Permission.READ, n.namespace())) {
        readable.add(n.namespace());
      }
    }
    if (p.allowsAll(Permission.READ, namespace)) {
      readable.add(namespace);
    }
    ArrayNode names = o.putArray("namespaces");
    readable.forEach(names::add);
    return o;
  }
}
