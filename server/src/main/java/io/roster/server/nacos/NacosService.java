package io.roster.server.nacos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.grpc.stub.StreamObserver;
import io.roster.proto.nacos.Payload;
import io.roster.server.auth.Authenticator;
import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Names;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.naming.Persistent;
import io.roster.server.naming.ServiceLists;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import io.roster.server.session.RequestCounters;
import io.roster.server.session.Session;
import io.roster.server.session.SessionManager;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Nacos 2.x unary requests ({@code /Request/request}, docs/nacos-compat.md), mapped to a
 * {@link Session}'s calls: the server check that starts a connection, and the naming requests
 * of the first slice ({@code InstanceRequest}, {@code BatchInstanceRequest}, {@code
 * SubscribeServiceRequest}, {@code ServiceQueryRequest}, {@code ServiceListRequest}, {@code
 * HealthCheckRequest}). Anything
 * else is answered with an {@code ErrorResponse} that names the type. The connection's stream,
 * whose setup opens the session these requests use, is {@link NacosStreams}'s.
 *
 * <p>With auth on, each naming request's {@code accessToken} header is checked and becomes the
 * connection's identity ({@link #identify}); the session then checks write for changes and read
 * for subscriptions, and this class read for queries and lists. A refusal is the request's
 * own response with errorCode 403, on which the official client logs in again (decision 66).
 *
 * <p>Thread-safe. Requests run on the transport's thread; answers may complete on the
 * writer's (a cluster member answers once the log has applied a change).
 */
final class NacosService {

  private static final Logger log = LoggerFactory.getLogger(NacosService.class);

  /** {@code ServiceListRequest}'s fields, as its errors name them. */
  private static final ServiceLists.Fields LIST_FIELDS =
      new ServiceLists.Fields("namespace", "groupName", "pageNo", "pageSize");

  /** The request header that carries the client's access token (Nacos's {@code accessToken}). */
  static final String ACCESS_TOKEN = "accessToken";

  private final SessionManager sessions;
  private final Registry registry;
  private final Persistent persistent;
  private final NacosConnections connections;
  private final ClientDetection detection;
  /** Whether the server's registry may be read now (not while a cluster member has not joined or caught up). */
  private final Readiness readiness;
  private final NacosTrace trace;

  NacosService(SessionManager sessions, Registry registry, NacosConnections connections, ClientDetection detection,
      Readiness readiness, NacosTrace trace) {
    this.sessions = sessions;
    this.trace = trace;
    this.readiness = readiness;
    this.registry = registry;
    this.persistent = new Persistent(registry, sessions.writer(), sessions::probePolicy);
    this.connections = connections;
    this.detection = detection;
  }

  // --- /Request/request ---

  /** Answers one unary request; never fails (a failure is an {@code ErrorResponse}). */
  void request(Payload request, StreamObserver<Payload> response) {
    String type = Envelope.type(request);
    String conn = NacosConnections.currentId();
    trace.step(conn, "received", type);
    long start = sessions.requests().start();
    CompletableFuture<Payload> answer;
    try {
      answer = answer(request);
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    answer.whenComplete((p, e) -> {
      RuntimeException failure = e == null ? null : cause(e);
      String counted = COUNTED_TYPES.contains(type) ? type : "other";
      if (type.equals("HealthCheckRequest") && failure == null) {
        // the client's keepalive, not a request
      } else if (failure != null) {
        sessions.requests().count(RequestCounters.Protocol.NACOS_GRPC, counted, failure, start);
      } else {
        // Refused without an exception (no handler, no connection): an ErrorResponse.
        sessions.requests().count(RequestCounters.Protocol.NACOS_GRPC, counted,
            Envelope.type(p).equals("ErrorResponse") ? "refused" : RequestCounters.OK, start);
      }
      response.onNext(failure == null ? p : error(type, failure));
      response.onCompleted();
      trace.step(conn, "answered", type);
    });
  }

  /** The request types counted by name in the server's metrics; any other counts as {@code other}. */
  private static final Set<String> COUNTED_TYPES = Set.of("ServerCheckRequest", "HealthCheckRequest",
      "InstanceRequest", "BatchInstanceRequest", "SubscribeServiceRequest", "ServiceQueryRequest",
      "ServiceListRequest", "PersistentInstanceRequest");

  private CompletableFuture<Payload> answer(Payload request) {
    String type = Envelope.type(request);
    String connectionId = NacosConnections.currentId();
    if (type.equals("ServerCheckRequest")) {
      String refused = connections.refusal();
      if (refused != null) {
        // Anything but a ServerCheckResponse makes a Nacos client try its next server: its first
        // step in connecting is this check, before it opens the stream.
        return done(Envelope.error(Envelope.INVALID_SERVER_STATUS, refused + ": no new connections here; "
            + "connect to another server, or to this one again once it is back"));
      }
      // Answered before the connection is registered: it tells the client its id.
      ObjectNode fields = NacosMapping.JSON.createObjectNode();
      fields.put("connectionId", connectionId == null ? "" : connectionId);
      fields.put("supportAbilityNegotiation", true);
      return done(Envelope.response("ServerCheckResponse", fields));
    }
    JsonNode body = Envelope.body(request);
    String refusal = refusal(type, NacosMapping.text(body, "module"));
    if (refusal != null) {
      return done(Envelope.error(Envelope.NO_HANDLER, refusal));
    }
    NacosConnection c = connections.get(connectionId);
    if (c == null || c.session() == null) {
      return done(Envelope.error(Envelope.UN_REGISTER, "Connection is unregistered."));
    }
    c.heard(detection.now());
    Session session = c.session();
    if (type.equals("HealthCheckRequest")) {
      // The client's connection check: it carries no token, and Nacos asks for none.
      return done(Envelope.response("HealthCheckResponse"));
    }
    String notServing = readiness.refusal();
    if (notServing != null) {
      // This server's registry is not the cluster's: nothing is read from it,
      // nor written through it.
      return done(Envelope.error(Envelope.UNAVAILABLE, notServing + "; ask another server"));
    }
    Principal caller = identify(c, session, request);
    return switch (type) {
      case "InstanceRequest" -> instance(session, caller, body);
      case "BatchInstanceRequest" -> batchInstance(session, body);
      case "PersistentInstanceRequest" -> persistentInstance(caller, body);
      case "SubscribeServiceRequest" -> subscribe(session, body);
      case "ServiceQueryRequest" -> query(caller, body);
      case "ServiceListRequest" -> listServices(caller, body);
      default -> throw new IllegalStateException("unhandled " + type); // refusal() lets only these through
    };
  }

  /**
   * Who sent {@code request} on connection {@code c}: its {@code accessToken} header or, without
   * one, the client certificate its transport verified (decision 80), checked, set as the session's
   * identity with the grants the auth file gives it now. A connection keeps
   * the identity its first request proved (PERMISSION_DENIED for a token of another), so that what
   * it registered is only ever changed by that identity. Its identity does not expire with the
   * token: the client renews its token by itself and sends the new one with its next request,
   * while a connection that only holds registrations sends no token at all (its {@code
   * HealthCheckRequest}s carry none); it ends when the auth file no longer has the identity, or
   * when the password of the user whose access token it last proved changed ({@code
   * SessionManager.revalidate}).
   *
   * @throws RegistryException UNAUTHENTICATED when the token proves no identity
   */
  private Principal identify(NacosConnection c, Session session, Payload request) {
    Authenticator authenticator = sessions.authenticator();
    if (!authenticator.enabled()) {
      return session.principal();
    }
    Principal p = authenticator.authenticate(request.getMetadata().getHeadersMap().get(ACCESS_TOKEN),
        NacosConnections.currentPeerCertificates(), session.info().remoteAddress(), ACCESS_TOKEN);
    synchronized (c) {
      Principal current = session.principal();
      if (current.named() && !current.name().equals(p.name())) {
        throw new RegistryException(RegistryException.Kind.PERMISSION_DENIED, ACCESS_TOKEN, ACCESS_TOKEN
            + ": proves \"" + p.name() + "\", but this connection is \"" + current.name() + "\" (a connection keeps "
            + "the identity of its first request; use another NamingService for another user)");
      }
      session.principal(p.expiringAt(Long.MAX_VALUE));
    }
    return p;
  }

  /** Why a request of this type is not served, or null when it is. */
  static @Nullable String refusal(String type, String module) {
    switch (type) {
      case "HealthCheckRequest", "InstanceRequest", "BatchInstanceRequest", "SubscribeServiceRequest",
          "ServiceQueryRequest", "ServiceListRequest", "PersistentInstanceRequest" -> {
        return null;
      }
      default -> {
        if ("config".equals(module) || type.startsWith("Config")) {
          return "Roster is a naming registry: config-center requests (" + type + ") are not served";
        }
        return "Roster does not handle " + (type.isEmpty() ? "a request without a type" : type)
            + " on the Nacos port; see docs/nacos-compat.md";
      }
    }
  }

  /**
   * {@code registerInstance}: this connection's one instance of the service; {@code
   * deregisterInstance}: none, or, when the address it names is a persistent instance, that one
   * (a delete always works on what is there: Spring Cloud Alibaba deregisters a persistent
   * instance with this request, as the client builds it without {@code ephemeral=false}).
   */
  private CompletableFuture<Payload> instance(Session session, Principal caller, JsonNode body) {
    String type = NacosMapping.text(body, "type");
    ServiceKey service = NacosMapping.service(body);
    CompletableFuture<?> applied = switch (type) {
      case "registerInstance" -> session.batchRegister(service, List.of(NacosMapping.instance(body.get("instance"))));
      case "deregisterInstance" -> {
        InstanceKey named = persistentNamed(service, body.get("instance"));
        // Nacos's rule: deregister removes this connection's entry for the service, whatever ip/port it names.
        yield named == null ? session.batchRegister(service, List.of()) : deregisterPersistent(caller, service, named);
      }
      default -> throw RegistryException.invalid("type", type, "registerInstance or deregisterInstance");
    };
    return applied(applied, "InstanceRequest").thenApply(r -> instanceResponse("InstanceResponse", type));
  }

  /** {@code change}, whose completion the trace logs as the request's {@code applied} step when it is on. */
  private CompletableFuture<?> applied(CompletableFuture<?> change, String type) {
    if (!trace.on()) {
      return change;
    }
    String conn = NacosConnections.currentId();
    return change.whenComplete((r, e) -> trace.step(conn, "applied", type));
  }

  /** The address {@code instance} names when a persistent instance is registered there; else null. */
  private @Nullable InstanceKey persistentNamed(ServiceKey service, @Nullable JsonNode instance) {
    if (instance == null || !instance.isObject()) {
      return null;
    }
    InstanceKey key;
    try {
      key = NacosMapping.instance(instance).key();
    } catch (RegistryException e) {
      return null; // not a whole instance: the connection's own rule applies
    }
    Owner owner = registry.ownerOf(service, key);
    return owner != null && owner.kind() == Owner.Kind.PERSISTENT ? key : null;
  }

  private CompletableFuture<Boolean> deregisterPersistent(Principal caller, ServiceKey service, InstanceKey key) {
    caller.check(Permission.WRITE, service.namespace(), service.group(), service.name());
    return persistent.deregister(service, key, caller);
  }


  /**
   * {@code PersistentInstanceRequest} ({@code ephemeral=false}, docs/persistence.md): {@code
   * registerInstance} registers or replaces a persistent instance, owned by no connection;
   * {@code deregisterInstance} removes the one at the instance's address, if any.
   */
  private CompletableFuture<Payload> persistentInstance(Principal caller, JsonNode body) {
    String type = NacosMapping.text(body, "type");
    ServiceKey service = NacosMapping.service(body);
    caller.check(Permission.WRITE, service.namespace(), service.group(), service.name());
    Instance instance = NacosMapping.instance(body.get("instance"), false);
    CompletableFuture<?> applied = switch (type) {
      case "registerInstance" -> persistent.register(service, instance, caller);
      case "deregisterInstance" -> persistent.deregister(service, instance.key(), caller);
      default -> throw RegistryException.invalid("type", type, "registerInstance or deregisterInstance");
    };
    return applied.thenApply(r -> instanceResponse("InstanceResponse", type));
  }

  /** {@code batchRegisterInstance}: the connection's complete set in the service. */
  private CompletableFuture<Payload> batchInstance(Session session, JsonNode body) {
    String type = NacosMapping.text(body, "type");
    if (!type.equals("batchRegisterInstance")) {
      throw RegistryException.invalid("type", type, "batchRegisterInstance");
    }
    ServiceKey service = NacosMapping.service(body);
    JsonNode list = body.path("instances");
    List<Instance> instances = new java.util.ArrayList<>(list.size());
    for (int i = 0; i < list.size(); i++) {
      try {
        instances.add(NacosMapping.instance(list.get(i)));
      } catch (RegistryException e) {
        throw new RegistryException(e.kind(), "instances[" + i + "]", "instances[" + i + "]." + e.getMessage());
      }
    }
    return applied(session.batchRegister(service, instances), "BatchInstanceRequest")
        .thenApply(r -> instanceResponse("BatchInstanceResponse", type));
  }

  private static Payload instanceResponse(String responseType, String type) {
    ObjectNode fields = NacosMapping.JSON.createObjectNode();
    fields.put("type", type);
    return Envelope.response(responseType, fields);
  }

  /**
   * Subscribe (or unsubscribe, {@code subscribe:false}); the answer carries the current state,
   * read after the subscription exists, so that it is never older than the first push.
   */
  private CompletableFuture<Payload> subscribe(Session session, JsonNode body) {
    ServiceKey service = NacosMapping.service(body);
    Set<String> clusters = NacosMapping.clusters(NacosMapping.text(body, "clusters"));
    if (body.path("subscribe").asBoolean(true)) {
      session.subscribe(service, clusters, () -> { });
    } else {
      try {
        session.unsubscribe(service);
      } catch (RegistryException e) {
        if (e.kind() != RegistryException.Kind.NOT_FOUND) {
          throw e;
        }
        // Nacos answers an unsubscribe of what was not subscribed with success.
      }
    }
    ObjectNode fields = NacosMapping.JSON.createObjectNode();
    fields.set("serviceInfo", NacosMapping.serviceInfo(registry.snapshot(service).view(clusters, false), clusters));
    fields.put("message", "success");
    return done(Envelope.response("SubscribeServiceResponse", fields));
  }

  /** {@code ServiceQueryRequest}: the state through the clusters filter, healthy only if asked. */
  private CompletableFuture<Payload> query(Principal caller, JsonNode body) {
    ServiceKey service = NacosMapping.service(body);
    caller.check(Permission.READ, service.namespace(), service.group(), service.name());
    Set<String> clusters = NacosMapping.clusters(NacosMapping.text(body, "cluster"));
    ServiceSnapshot view = registry.snapshot(service).view(clusters, body.path("healthyOnly").asBoolean(false));
    ObjectNode fields = NacosMapping.JSON.createObjectNode();
    fields.set("serviceInfo", NacosMapping.serviceInfo(view, clusters));
    return done(Envelope.response("QueryServiceResponse", fields));
  }

  /**
   * {@code ServiceListRequest} ({@code getServicesOfServer}): one page of the names of the
   * services of the namespace in exactly the group named (Nacos's rule: group
   * {@code DEFAULT_GROUP} when none), sorted, without the {@code group@@} prefix; {@code count}
   * is the number of such services, not the page's size. A page past the end is empty. The
   * {@code selector} is ignored, as a Nacos 2.5 server ignores it.
   */
  private CompletableFuture<Payload> listServices(Principal caller, JsonNode body) {
    String given = NacosMapping.text(body, "namespace");
    String namespace = given.isEmpty() ? Names.DEFAULT_NAMESPACE : given;
    String group = NacosMapping.text(body, "groupName");
    caller.checkAll(Permission.READ, namespace);
    Registry.ServicePage page = ServiceLists.page(registry, LIST_FIELDS,
        namespace, group.isEmpty() ? Names.DEFAULT_GROUP : group,
        positiveInt(body, "pageNo", "a page number from 1"), positiveInt(body, "pageSize", "1.." + Integer.MAX_VALUE),
        Integer.MAX_VALUE);
    ObjectNode fields = NacosMapping.JSON.createObjectNode();
    fields.put("count", page.total());
    var names = fields.putArray("serviceNames");
    page.services().forEach(k -> names.add(k.name()));
    return done(Envelope.response("ServiceListResponse", fields));
  }

  /** A required integer field of at least 1. */
  private static int positiveInt(JsonNode body, String field, String expected) {
    JsonNode v = body.get(field);
    if (v == null || !v.isIntegralNumber() || !v.canConvertToInt() || v.asInt() < 1) {
      Object value = v == null ? RegistryException.described("missing") : v.isNumber() ? v.numberValue() : v.asText();
      throw RegistryException.invalid(field, value, expected);
    }
    return v.asInt();
  }

  // --- errors ---

  private static CompletableFuture<Payload> done(Payload p) {
    return CompletableFuture.completedFuture(p);
  }

  private static RuntimeException cause(Throwable failed) {
    Throwable t = failed;
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t instanceof RuntimeException re ? re : new IllegalStateException(t);
  }

  /**
   * The response type of each naming request: a refusal for want of a token or a permission is
   * answered in it (resultCode 500, errorCode 403), as Nacos answers it, because the client logs
   * in again only when the request's own response says 403 (an {@code ErrorResponse} makes it
   * retry the request and check its connection instead).
   */
  private static final Map<String, String> RESPONSE_TYPES = Map.of(
      "InstanceRequest", "InstanceResponse",
      "BatchInstanceRequest", "BatchInstanceResponse",
      "SubscribeServiceRequest", "SubscribeServiceResponse",
      "ServiceQueryRequest", "QueryServiceResponse",
      "ServiceListRequest", "ServiceListResponse");

  /** The one place a failure becomes an {@code ErrorResponse} (or, for a refusal by auth, the request's own response). */
  static Payload error(String type, RuntimeException e) {
    if (e instanceof RegistryException re && (re.kind() == RegistryException.Kind.UNAUTHENTICATED
        || re.kind() == RegistryException.Kind.PERMISSION_DENIED) && RESPONSE_TYPES.containsKey(type)) {
      return Envelope.failure(RESPONSE_TYPES.get(type), Envelope.NO_RIGHT, type + ": " + re.getMessage());
    }
    if (e instanceof RegistryException re) {
      int code = switch (re.kind()) {
        case INVALID_ARGUMENT, FAILED_PRECONDITION -> Envelope.BAD_REQUEST;
        case NOT_FOUND -> Envelope.NOT_FOUND;
        case RESOURCE_EXHAUSTED -> Envelope.OVER_LIMIT;
        case UNAVAILABLE -> Envelope.UNAVAILABLE;
        case UNAUTHENTICATED, PERMISSION_DENIED -> Envelope.NO_RIGHT;
      };
      return Envelope.error(code, type + ": " + re.getMessage());
    }
    if (e instanceof IllegalArgumentException) {
      return Envelope.error(Envelope.BAD_REQUEST, type + ": " + e.getMessage());
    }
    log.warn("Unexpected failure handling a Nacos {}", type, e);
    return Envelope.error(Envelope.SERVER_ERROR, type + ": internal error: " + e);
  }
}
