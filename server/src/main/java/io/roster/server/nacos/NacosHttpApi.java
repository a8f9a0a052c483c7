package io.roster.server.nacos;

import static io.roster.server.http.NamingParams.instanceKey;
import static io.roster.server.http.NamingParams.metadata;
import static io.roster.server.http.NamingParams.port;
import static io.roster.server.http.NamingParams.renamed;
import static io.roster.server.http.NamingParams.service;
import static io.roster.server.nacos.NacosHttpErrors.await;
import static io.roster.server.nacos.NacosHttpErrors.httpError;
import static io.roster.server.nacos.NacosHttpErrors.notAllowed;
import static io.roster.server.nacos.NacosHttpErrors.notFound;
import static io.roster.server.nacos.NacosHttpErrors.only;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.roster.server.auth.Audit;
import io.roster.server.auth.Authenticator;
import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.http.HttpCallers;
import io.roster.server.http.HttpEndpoint;
import io.roster.server.http.HttpException;
import io.roster.server.http.HttpRequest;
import io.roster.server.http.HttpResponse;
import io.roster.server.http.NamingParams;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Names;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.naming.Leases;
import io.roster.server.naming.ServiceLists;
import io.roster.server.naming.Persistent;
import io.roster.server.probe.ProbePolicy;
import io.roster.server.naming.Updates;
import io.roster.server.registry.Claim;
import io.roster.server.registry.HealthCheck;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import io.roster.server.registry.Writer;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.function.IntSupplier;

/**
 * The naming half of the Nacos v1 open API ({@code /nacos/v1/ns/...}), mapped to the registry:
 * instances registered here are heartbeat instances ({@link Leases}); reads come from the
 * registry's states; updates are operator changes ({@link Updates}). {@code /nacos/v1/cs/...}
 * (the config center) is answered 501. Parameters, defaults and answers follow Nacos 2.5's
 * {@code InstanceController}, {@code ServiceController} and {@code OperatorController};
 * docs/nacos-compat.md lists every difference.
 *
 * <p>With auth on ({@code --auth-file}), every route but the status-only {@code
 * operator/metrics} probe asks who the caller is and checks what it may do before anything
 * changes ({@link HttpCallers}, decision 66): register, deregister and beat need write on the
 * service, reads need read, {@code PUT /instance} (taking an instance out of traffic) admin on
 * the service, the operator's routes admin on every namespace. {@link NacosLogin} issues the
 * tokens.
 *
 * <p>Thread-safe; runs on the HTTP endpoint's worker threads. A change answers once this
 * member has applied it (in a cluster, once the log has committed it), or 503 after {@link
 * NacosHttpErrors#APPLY_TIMEOUT}.
 */
public final class NacosHttpApi {

  /** The path prefix of the naming API. */
  public static final String NAMING = "/nacos/v1/ns";
  /** The path prefix of the config API, which Roster does not serve. */
  public static final String CONFIG = "/nacos/v1/cs";
  /** The beat answer's codes (Nacos's {@code NamingResponseCode}). */
  static final int OK = 10200;
  static final int RESOURCE_NOT_FOUND = 20404;
  static final int MAX_PAGE_SIZE = 1000;
  /** The service list's parameters, as its errors name them. */
  private static final ServiceLists.Fields LIST_FIELDS =
      new ServiceLists.Fields("namespaceId", "groupName", "pageNo", "pageSize");

  private final Registry registry;
  private final Leases leases;
  private final Updates updates;
  private final Persistent persistent;
  private final HttpCallers callers;
  private final NacosLogin login;
  private final NacosOperator operator;
  private final NacosServiceRoutes serviceRoutes;
  /** Whether this server serves its registry now: until it does, the routes that read it answer 503. */
  private final Readiness readiness;

  /**
   * @param connections how many Roster sessions and Nacos gRPC connections this member has
   *     (for {@code operator/metrics})
   * @param authenticator who the callers are ({@link Authenticator#off()}: everyone may do everything)
   */
  public NacosHttpApi(Registry registry, Writer writer, Leases leases, IntSupplier connections,
      Authenticator authenticator) {
    this(registry, writer, leases, connections, authenticator, () -> ProbePolicy.DEFAULT, Readiness.ready());
  }

  /**
   * @param probePolicy where the server may probe ({@code --probe-allow}): persistent registrations and checks follow it
   * @param readiness whether the server serves now: until it does, every route but the status and
   *     the log levels answers 503 naming why, and {@code operator/metrics} says {@code DOWN}
   */
  public NacosHttpApi(Registry registry, Writer writer, Leases leases, IntSupplier connections,
      Authenticator authenticator, java.util.function.Supplier<ProbePolicy> probePolicy, Readiness readiness) {
    this.readiness = readiness;
    this.registry = registry;
    this.leases = leases;
    this.updates = new Updates(writer, registry, probePolicy);
    this.persistent = new Persistent(registry, writer, probePolicy);
    this.callers = new HttpCallers(authenticator);
    this.login = new NacosLogin(authenticator);
    this.operator = new NacosOperator(registry, leases, connections, callers, readiness);
    this.serviceRoutes = new NacosServiceRoutes(registry, updates, callers);
  }

  /** Adds this API's routes to {@code endpoint}: the naming API, Nacos's logins and the config center's 501. */
  public void routeOn(HttpEndpoint endpoint) {
    endpoint.route(NAMING, this::naming);
    login.routeOn(endpoint);
    endpoint.route(CONFIG, r -> HttpResponse.text(501, "Roster is a naming registry: the Nacos config center ("
        + r.path() + ") is not served; see docs/nacos-compat.md"));
  }

  /**
   * Answers one request under {@code /nacos/v1/ns}: 503 naming why while the server's registry
   * may not be read, but for the status and the log levels.
   */
  HttpResponse naming(HttpRequest r) {
    String route = r.path().substring(NAMING.length());
    if (!route.equals("/operator/metrics") && !route.equals("/operator/log")) {
      HttpException.refuseUnlessServing(readiness);
    }
    try {
      return switch (route) {
        case "/instance" -> switch (r.method()) {
          case "POST" -> register(r);
          case "DELETE" -> deregister(r);
          case "PUT", "PATCH" -> update(r); // PUT changes only what it is given, so both are PATCH
          case "GET" -> detail(r);
          default -> throw notAllowed(r, "GET, POST, PUT, PATCH, DELETE");
        };
        case "/instance/list" -> only(r, "GET", this::list);
        case "/instance/beat" -> only(r, "PUT", this::beat);
        case "/service/list" -> only(r, "GET", this::services);
        case "/service" -> serviceRoutes.answer(r);
        case "/cluster" -> only(r, "PUT", this::updateCluster);
        case "/operator/metrics" -> only(r, "GET", operator::metrics);
        case "/operator/log" -> only(r, "PUT", operator::logLevel);
        default -> throw new HttpException(404, "no such path: " + r.path()
            + " (Roster serves /nacos/v1/ns/instance, /instance/list, /instance/beat, /service, /service/list, "
            + "/cluster, /operator/metrics and /operator/log; see docs/nacos-compat.md)");
      };
    } catch (RegistryException e) {
      throw httpError(e);
    }
  }

  // --- clusters ---

  /**
   * PUT /cluster: how the server probes the persistent instances of one cluster of a service
   * ({@code healthChecker}, {@code checkPort}, {@code useInstancePort4Check}); "ok". Cluster
   * metadata is not kept (docs/nacos-compat.md).
   */
  private HttpResponse updateCluster(HttpRequest r) {
    ServiceKey service = service(r);
    String cluster = r.param("clusterName", "");
    if (cluster.isEmpty()) {
      throw HttpException.badParameter("clusterName", null, "a cluster name");
    }
    Names.cluster("clusterName", cluster);
    Principal who = callers.check(r, Permission.ADMIN, service);
    HealthCheck check = NacosMapping.healthCheck(r.param("healthChecker", ""), r.param("checkPort", ""),
        r.boolParam("useInstancePort4Check"));
    Updates.ServiceChange change = new Updates.ServiceChange(null, false, Map.of(), Map.of(cluster, check));
    try {
      await(updates.service(service, change));
    } catch (RuntimeException e) {
      Audit.log(who, "UpdateCluster(HTTP)", service.toString(), change.describe(), String.valueOf(e.getMessage()));
      throw e;
    }
    Audit.log(who, "UpdateCluster(HTTP)", service.toString(), change.describe(), "ok");
    return HttpResponse.text(200, "ok");
  }

  // --- instances ---

  /**
   * POST /instance: registers a heartbeat instance, or with {@code ephemeral=false} a persistent
   * one (docs/persistence.md); "ok".
   */
  private HttpResponse register(HttpRequest r) {
    ServiceKey service = service(r);
    boolean ephemeral = !Boolean.FALSE.equals(r.boolParam("ephemeral"));
    Instance instance = instance(r, ephemeral);
    Principal who = callers.check(r, Permission.WRITE, service);
    if (!ephemeral) {
      await(persistent.register(service, instance, who));
      return HttpResponse.text(200, "ok");
    }
    Claim claim = claim(who, service, instance.key());
    Claim held = registry.claimOf(service, instance.key());
    await(Audit.track(who, held == null ? "" : held.identity(), "RegisterInstance(HTTP)",
        service + " " + instance.key(), leases.register(service, instance, r.remoteHost(), claim)));
    return HttpResponse.text(200, "ok");
  }

  /**
   * The claim {@code who} registers {@code key} with; refused (403, nothing changed) when another
   * identity registered it and {@code who} is not an admin of the service (decision 65).
   */
  private Claim claim(Principal who, ServiceKey service, InstanceKey key) {
    boolean admin = who.allows(Permission.ADMIN, service.namespace(), service.group(), service.name());
    Claim claim = new Claim("", 0, who.name(), admin);
    Claim held = registry.claimOf(service, key);
    if (held != null && !held.replaceableBy(claim)) {
      String why = "instance " + key + " is registered by \"" + held.identity() + "\": only that identity or an admin "
          + "may change it";
      Audit.refused(who, "change " + service + " " + key, why);
      throw httpError(new RegistryException(RegistryException.Kind.PERMISSION_DENIED, "", why));
    }
    return claim;
  }

  /**
   * DELETE /instance: ends a heartbeat instance, wherever its lease is held, or removes a
   * persistent one, whatever {@code ephemeral} says (a delete always works on what is there);
   * "ok" also when there is no such instance (as Nacos). An instance that a connection holds is
   * refused: it goes with its owner.
   */
  private HttpResponse deregister(HttpRequest r) {
    ServiceKey service = service(r);
    InstanceKey key = instanceKey(r);
    Principal who = callers.check(r, Permission.WRITE, service);
    Owner owner = registry.ownerOf(service, key);
    if (owner == null || owner.kind() == Owner.Kind.PERSISTENT) {
      // None here may be a registration this member has not applied yet: the log decides.
      await(persistent.deregister(service, key, who));
      return HttpResponse.text(200, "ok");
    }
    Claim held = registry.claimOf(service, key);
    claim(who, service, key); // refuses another identity's instance, unless an admin's
    if (owner.kind() != Owner.Kind.LEASE) {
      throw new HttpException(400, "instance " + key + " of " + service.groupedName() + " is held by a connection ("
          + owner + "): it goes when that client deregisters it or disconnects; PUT enabled=false takes it out of "
          + "traffic");
    }
    await(Audit.track(who, held == null ? "" : held.identity(), "DeregisterInstance(HTTP)", service + " " + key,
        leases.endAnywhere(service, key, owner)));
    return HttpResponse.text(200, "ok");
  }

  /**
   * PUT (or PATCH) /instance: an operator's change of {@code enabled}, {@code weight} and {@code metadata}
   * (replaced), whoever holds the instance; a parameter not given is left as it is. {@code
   * enabled=false} holds: the instance stays out of traffic whoever registers it again, until
   * {@code enabled=true} or until it leaves the registry (decision 40).
   */
  private HttpResponse update(HttpRequest r) {
    updateInstance(r, "UpdateInstance(HTTP)");
    return HttpResponse.text(200, "ok");
  }

  /**
   * An operator's change of one instance ({@code enabled}, {@code weight}, {@code metadata}),
   * audited as {@code action}: what PUT /instance does, and the admin API's instance update.
   *
   * @return the instance as changed
   * @throws HttpException 404 when it is not registered, 403 for a caller who is not an admin of
   *     the service
   */
  Instance updateInstance(HttpRequest r, String action) {
    ServiceKey service = service(r);
    InstanceKey key = instanceKey(r);
    // Taking any instance out of traffic is an operator's act.
    Principal who = callers.check(r, Permission.ADMIN, service);
    String metadata = r.param("metadata");
    Boolean enabled = r.boolParam("enabled");
    Updates.InstanceChange change = new Updates.InstanceChange(enabled != null ? enabled : r.boolParam("enable"),
        r.doubleParam("weight"), null, metadata != null, metadata == null ? Map.of() : metadata(metadata));
    Instance updated;
    try {
      updated = await(updates.instance(service, key, change, true)); // enabled=false holds (decision 40)
    } catch (RuntimeException e) {
      Audit.log(who, action, service + " " + key, change.describe(), String.valueOf(e.getMessage()));
      throw e;
    }
    Audit.log(who, action, service + " " + key, change.describe(), updated == null ? "not registered" : "ok");
    if (updated == null) {
      throw notFound(service, key);
    }
    return updated;
  }

  /** GET /instance: one instance, disabled ones too. */
  private HttpResponse detail(HttpRequest r) {
    ServiceKey service = service(r);
    InstanceKey key = instanceKey(r);
    callers.check(r, Permission.READ, service);
    Instance i = registry.instance(service, key);
    if (i == null) {
      throw notFound(service, key);
    }
    ObjectNode o = NacosMapping.JSON.createObjectNode();
    o.put("service", service.groupedName());
    o.put("ip", i.ip());
    o.put("port", i.port());
    o.put("clusterName", i.cluster());
    o.put("weight", i.weight());
    o.put("healthy", i.healthy());
    o.put("enabled", i.enabled());
    o.put("ephemeral", i.ephemeral());
    o.put("instanceId", i.instanceId());
    ObjectNode m = o.putObject("metadata");
    i.sortedMetadata().forEach(m::put);
    return json(o);
  }

  /** GET /instance/list: the service's state (enabled instances), in Nacos's ServiceInfo shape. */
  private HttpResponse list(HttpRequest r) {
    ServiceKey service = service(r);
    callers.check(r, Permission.READ, service);
    Set<String> clusters = NacosMapping.clusters(r.param("clusters", ""));
    boolean healthyOnly = Boolean.TRUE.equals(r.boolParam("healthyOnly"));
    ServiceSnapshot view = registry.snapshot(service).view(clusters, healthyOnly);
    ObjectNode o = NacosMapping.serviceInfo(view, clusters);
    o.put("name", service.groupedName()); // the v1 API names the service with its group
    return json(o);
  }

  /**
   * PUT /instance/beat: renews a heartbeat instance. An unknown one is registered from the
   * {@code beat} body when there is one (as Nacos), else answered {@code code: 20404}, on
   * which a client registers it again.
   */
  private HttpResponse beat(HttpRequest r) {
    String beatText = r.param("beat");
    JsonNode beat = beatText == null || beatText.isEmpty() ? null : NamingParams.json("beat", beatText, "a JSON object (RsInfo: ip, port, cluster, serviceName, weight, metadata)");
    ServiceKey service = service(r, beat == null ? "" : NacosMapping.text(beat, "serviceName"));
    String ip = beat != null && beat.hasNonNull("ip") ? beat.get("ip").asText() : r.required("ip");
    int port = beat != null && beat.hasNonNull("port") ? port("beat.port", beat.get("port").asText()) : port(r);
    String cluster = beat != null && !NacosMapping.text(beat, "cluster").isEmpty() ? NacosMapping.text(beat, "cluster")
        : r.param("clusterName", r.param("cluster", Names.DEFAULT_CLUSTER));
    InstanceKey key = new InstanceKey(ip, port, Names.cluster("clusterName", cluster));
    Principal who = callers.check(r, Permission.WRITE, service);
    Claim claim = claim(who, service, key);
    Duration interval = leases.beat(service, key);
    int code = OK;
    if (interval == null && beat != null) {
      Instance instance = NacosMapping.instance(beatInstance(beat, key));
      interval = Leases.Timeouts.of(instance.metadata()).interval();
      await(leases.register(service, instance, r.remoteHost(), claim));
    } else if (interval == null) {
      code = RESOURCE_NOT_FOUND;
      interval = Leases.Timeouts.DEFAULT.interval();
    }
    ObjectNode o = NacosMapping.JSON.createObjectNode();
    o.put("clientBeatInterval", interval.toMillis());
    o.put("code", code);
    o.put("lightBeatEnabled", true);
    return json(o);
  }

  /** A beat body ({@code RsInfo}) as a Nacos instance JSON for {@link NacosMapping#instance}. */
  private static ObjectNode beatInstance(JsonNode beat, InstanceKey key) {
    ObjectNode i = NacosMapping.JSON.createObjectNode();
    i.put("ip", key.ip());
    i.put("port", key.port());
    i.put("clusterName", key.cluster());
    i.put("weight", beat.path("weight").asDouble(1.0));
    if (beat.has("metadata")) {
      i.set("metadata", beat.get("metadata"));
    }
    return i;
  }

  // --- services and the server ---

  /** GET /service/list: one page of the service names of a namespace and group. */
  private HttpResponse services(HttpRequest r) {
    String namespace = r.param("namespaceId", Names.DEFAULT_NAMESPACE);
    callers.checkAll(r, Permission.READ, namespace);
    Registry.ServicePage page = ServiceLists.page(registry, LIST_FIELDS, namespace,
        r.param("groupName", Names.DEFAULT_GROUP), r.intParam("pageNo", 1, 1, Integer.MAX_VALUE),
        r.intParam("pageSize", 10, 1, MAX_PAGE_SIZE), MAX_PAGE_SIZE);
    ObjectNode o = NacosMapping.JSON.createObjectNode();
    o.put("count", page.total());
    var doms = o.putArray("doms");
    page.services().forEach(k -> doms.add(k.name()));
    return json(o);
  }

  /** PUT /operator/log: sets the level of one of the server's loggers at runtime (logback). */
  HttpResponse logLevel(HttpRequest r) {
    return operator.logLevel(r);
  }

  // --- parameters ---

  /** The instance a POST describes: a heartbeat instance, or a persistent one. */
  private static Instance instance(HttpRequest r, boolean ephemeral) {
    ObjectNode json = NacosMapping.JSON.createObjectNode();
    json.put("ip", r.required("ip"));
    json.put("port", port(r));
    Double weight = r.doubleParam("weight");
    json.put("weight", weight == null ? 1.0 : weight);
    Boolean healthy = r.boolParam("healthy");
    json.put("healthy", healthy == null || healthy);
    Boolean enabled = r.boolParam("enabled");
    if (enabled == null) {
      enabled = r.boolParam("enable");
    }
    json.put("enabled", enabled == null || enabled);
    json.put("clusterName", r.param("clusterName", r.param("cluster", Names.DEFAULT_CLUSTER)));
    String metadata = r.param("metadata");
    if (metadata != null && !metadata.isEmpty()) {
      ObjectNode m = json.putObject("metadata");
      metadata(metadata).forEach(m::put);
    }
    try {
      return NacosMapping.instance(json, ephemeral);
    } catch (RegistryException e) {
      throw renamed(e, "instance.", "");
    }
  }

  // --- answers ---

  static HttpResponse json(JsonNode body) {
    try {
      return HttpResponse.json(NacosMapping.JSON.writeValueAsString(body));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
