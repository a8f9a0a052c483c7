package io.roster.server.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.roster.server.auth.Principal;
import io.roster.server.http.Applied;
import io.roster.server.http.HttpCallers;
import io.roster.server.http.HttpException;
import io.roster.server.http.HttpRequest;
import io.roster.server.http.JsonEnvelope;
import io.roster.server.model.RegistryException;
import io.roster.server.naming.NamespaceChanges;
import io.roster.server.registry.Namespace;
import io.roster.server.registry.NamespaceCount;
import io.roster.server.registry.Registry;
import java.util.concurrent.CompletableFuture;

/**
 * {@code /roster/v1/admin/namespaces} (decision 97): GET lists the namespaces the caller may read
 * with their counts; POST creates ({@code namespaceId}, {@code namespaceName}, {@code
 * namespaceDesc}), PUT edits, DELETE deletes an empty one, each with {@code admin} on the
 * namespace. A refusal is the envelope with 400 (a bad field), 403, 404, 409 (it exists; it is not
 * empty, naming its counts; {@code public}), 429 (too many) or 503. Thread-safe; stateless.
 */
final class NamespacesApi {

  /** How long a request waits for its change to be applied (the log, in a cluster). */

  private final Registry registry;
  private final NamespaceChanges changes;
  private final HttpCallers callers;

  NamespacesApi(Registry registry, NamespaceChanges changes, HttpCallers callers) {
    this.registry = registry;
    this.changes = changes;
    this.callers = callers;
  }

  JsonNode answer(HttpRequest r) {
    Principal who = callers.who(r);
    return switch (r.method()) {
      case "GET" -> list(who);
      case "POST" -> json(count(await(changes.create(who, r.required("namespaceId"),
          r.param("namespaceName", r.required("namespaceId")), r.param("namespaceDesc", "")))));
      case "PUT" -> {
        String id = r.required("namespaceId");
        NamespaceCount now = registry.namespaceBook().count(id);
        Namespace details = now.details();
        yield json(count(await(changes.edit(who, id, r.param("namespaceName", details == null ? id : details.name()),
            r.param("namespaceDesc", details == null ? "" : details.description())))));
      }
      case "DELETE" -> json(new NamespaceCount(r.required("namespaceId"), 0, 0,
          await(changes.delete(who, r.required("namespaceId")))));
      default -> throw new HttpException(405, r.method() + " " + r.path()
          + " is not served (expected: GET, POST, PUT, DELETE)");
    };
  }

  private NamespaceCount count(Namespace ns) {
    return registry.namespaceBook().count(ns.id());
  }

  private JsonNode list(Principal who) {
    ArrayNode items = JsonEnvelope.JSON.createArrayNode();
    changes.list(who).forEach(n -> items.add(json(n)));
    return items;
  }

  /** One namespace: its id, name, description, whether an operator created it, and its counts. */
  static ObjectNode json(NamespaceCount n) {
    ObjectNode o = JsonEnvelope.JSON.createObjectNode();
    Namespace details = n.details();
    o.put("namespace", n.namespace());
    o.put("name", details == null ? n.namespace() : details.name());
    o.put("description", details == null ? "" : details.description());
    o.put("created", details != null && !n.namespace().equals(Namespace.PUBLIC.id()));
    o.put("serviceCount", n.services());
    o.put("instanceCount", n.instances());
    return o;
  }

  /** Waits for a change to be applied here; its refusal becomes the answer's status. */
  static <T> T await(CompletableFuture<T> applied) {
    return Applied.await(applied, NamespacesApi::status);
  }


  /** A registry refusal as this API's status. */
  static HttpException status(RegistryException e) {
    int status = switch (e.kind()) {
      case INVALID_ARGUMENT -> 400;
      case FAILED_PRECONDITION -> 409;
      case NOT_FOUND -> 404;
      case RESOURCE_EXHAUSTED -> 429;
      case UNAVAILABLE -> 503;
      case UNAUTHENTICATED, PERMISSION_DENIED -> 403;
    };
    return new HttpException(status, e.getMessage(), e);
  }
}
