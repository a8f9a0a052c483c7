package io.roster.server.nacos;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.roster.server.auth.Principal;
import io.roster.server.http.HttpCallers;
import io.roster.server.http.HttpEndpoint;
import io.roster.server.http.HttpException;
import io.roster.server.http.HttpRequest;
import io.roster.server.http.HttpResponse;
import io.roster.server.model.RegistryException;
import io.roster.server.naming.NamespaceChanges;
import io.roster.server.registry.Namespace;
import io.roster.server.registry.NamespaceCount;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import java.util.UUID;

/**
 * Nacos's console API for namespaces, {@code /nacos/v1/console/namespaces} (decision 97), so that
 * Nacos's tooling manages Roster's: GET lists them ({@code {"code":200,"data":[{namespace,
 * namespaceShowName, namespaceDesc, quota, configCount, type}]}}), or one with {@code
 * show=all&namespaceId=}, or answers {@code checkNamespaceIdExist=true&customNamespaceId=} with
 * {@code true} or {@code false}; POST creates ({@code customNamespaceId}, a new UUID when empty,
 * {@code namespaceName}, {@code namespaceDesc}), PUT edits ({@code namespace}, {@code
 * namespaceShowName}, {@code namespaceDesc}), DELETE deletes ({@code namespaceId}); each answers
 * {@code true}. The rules are {@link NamespaceChanges}'; a refusal is a status with the reason as
 * text (400, 403, 404, 409, 429, 503). Thread-safe; stateless.
 */
public final class NacosNamespaces {

  /** The path. */
  public static final String PATH = "/nacos/v1/console/namespaces";
  /** What Nacos reports as a namespace's quota of configurations; Roster keeps none. */
  static final int QUOTA = 200;

  private final Registry registry;
  private final NamespaceChanges changes;
  private final HttpCallers callers;
  private final Readiness readiness;

  public NacosNamespaces(Registry registry, NamespaceChanges changes, HttpCallers callers, Readiness readiness) {
    this.registry = registry;
    this.changes = changes;
    this.callers = callers;
    this.readiness = readiness;
  }

  /** Adds the route to {@code endpoint}. */
  public void routeOn(HttpEndpoint endpoint) {
    endpoint.route(PATH, this::answer);
  }

  HttpResponse answer(HttpRequest r) {
    if (!r.path().equals(PATH)) {
      throw new HttpException(404, "no such path: " + r.path() + " (see docs/nacos-compat.md)");
    }
    HttpException.refuseUnlessServing(readiness);
    Principal who = callers.who(r);
    try {
      return switch (r.method()) {
        case "GET" -> get(r, who);
        case "POST" -> {
          String id = r.param("customNamespaceId", "").trim();
          String created = id.isEmpty() ? UUID.randomUUID().toString() : id;
          await(changes.create(who, created, r.required("namespaceName"), r.param("namespaceDesc", "")));
          yield NacosHttpApi.json(NacosMapping.JSON.getNodeFactory().booleanNode(true));
        }
        case "PUT" -> {
          String id = r.required("namespace");
          await(changes.edit(who, id, r.required("namespaceShowName"), r.param("namespaceDesc", "")));
          yield NacosHttpApi.json(NacosMapping.JSON.getNodeFactory().booleanNode(true));
        }
        case "DELETE" -> {
          await(changes.delete(who, r.required("namespaceId")));
          yield NacosHttpApi.json(NacosMapping.JSON.getNodeFactory().booleanNode(true));
        }
        default -> throw NacosHttpErrors.notAllowed(r, "GET, POST, PUT, DELETE");
      };
    } catch (RegistryException e) {
      throw status(e);
    }
  }

  private HttpResponse get(HttpRequest r, Principal who) {
    if ("true".equals(r.param("checkNamespaceIdExist"))) {
      String id = r.required("customNamespaceId");
      return NacosHttpApi.json(NacosMapping.JSON.getNodeFactory().booleanNode(registry.namespaceBook().exists(id)));
    }
    String one = r.param("namespaceId");
    if (one != null && !one.isEmpty()) {
      Namespace.checkId("namespaceId", one);
      callers.checkAll(r, io.roster.server.auth.Permission.READ, one);
      if (!registry.namespaceBook().exists(one)) {
        throw new HttpException(404, "namespaceId: \"" + one + "\" does not exist");
      }
      return NacosHttpApi.json(json(registry.namespaceBook().count(one)));
    }
    ArrayNode data = NacosMapping.JSON.createArrayNode();
    changes.list(who).forEach(n -> data.add(json(n)));
    ObjectNode o = NacosMapping.JSON.createObjectNode();
    o.put("code", 200);
    o.putNull("message");
    o.set("data", data);
    return NacosHttpApi.json(o);
  }

  /** One namespace in Nacos's shape: type 0 for {@code public}, 2 for the others. */
  static ObjectNode json(NamespaceCount n) {
    ObjectNode o = NacosMapping.JSON.createObjectNode();
    Namespace details = n.details();
    o.put("namespace", n.namespace());
    o.put("namespaceShowName", details == null ? n.namespace() : details.name());
    o.put("namespaceDesc", details == null ? "" : details.description());
    o.put("quota", QUOTA);
    o.put("configCount", 0);
    o.put("type", n.namespace().equals(Namespace.PUBLIC.id()) ? 0 : 2);
    o.put("serviceCount", n.services());
    o.put("instanceCount", n.instances());
    return o;
  }

  private static void await(java.util.concurrent.CompletableFuture<Namespace> applied) {
    try {
      NacosHttpErrors.await(applied);
    } catch (HttpException e) {
      RegistryException refusal = e.refusal();
      throw refusal == null ? e : status(refusal);
    }
  }

  /** A refusal as Nacos's console answers it: 409 for a namespace that exists or is not empty. */
  private static HttpException status(RegistryException e) {
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
