package io.roster.server.nacos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.roster.server.auth.Audit;
import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.http.ConnectionJson;
import io.roster.server.http.HttpCallers;
import io.roster.server.http.HttpEndpoint;
import io.roster.server.http.HttpException;
import io.roster.server.http.HttpRequest;
import io.roster.server.http.HttpResponse;
import io.roster.server.http.JsonEnvelope;
import io.roster.server.http.NamingParams;
import io.roster.server.model.Instance;
import io.roster.server.model.Names;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.naming.ConnectionPages;
import io.roster.server.naming.ServiceLists;
import io.roster.server.naming.Updates;
import io.roster.server.push.PushEngine;
import io.roster.server.registry.HealthCheck;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import io.roster.server.registry.ServiceSettings;
import io.roster.server.registry.Writer;
import io.roster.server.session.Session;
import io.roster.server.session.SessionManager;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The naming half of Nacos 3's admin API ({@code /nacos/v3/admin/ns/...}), which the console and
 * Nacos's own tooling call: services listed with search and paging, a service's detail and
 * settings, its instances (disabled and held ones too, with who owns each) and subscribers, an
 * operator's change of an instance, the connections and log levels. Answers are Nacos 3's
 * envelope, {@code {"code":0,"message":"success","data":...}}; a refusal keeps the envelope, with
 * the HTTP status as its {@code code} and the reason as its {@code message}. Reads need {@code
 * read} on what they show, changes {@code admin} (docs/admin-api.md). Thread-safe.
 */
public final class NacosAdminApi {

  /** The path prefix. */
  public static final String PATH = "/nacos/v3/admin/ns";
  /** The largest page of services, instances' subscribers or connections. */
  static final int MAX_PAGE_SIZE = 500;

  private static final ServiceLists.Fields LIST_FIELDS =
      new ServiceLists.Fields("namespaceId", "groupNameParam", "pageNo", "pageSize");
  private static final ConnectionPages.Fields PAGE_FIELDS = new ConnectionPages.Fields("pageNo", "pageSize");

  private final Registry registry;
  private final Updates updates;
  private final PushEngine engine;
  private final SessionManager sessions;
  private final NacosHttpApi v1;
  private final HttpCallers callers;
  private final Readiness readiness;

  /**
   * @param v1 the v1 API, whose instance update and log levels this API shares
   * @param readiness whether the server serves now: until it does, every route but the log levels answers 503 naming why
   */
  public NacosAdminApi(Registry registry, Writer writer, PushEngine engine, SessionManager sessions, NacosHttpApi v1,
      Readiness readiness) {
    this.readiness = readiness;
    this.registry = registry;
    this.updates = new Updates(writer, registry, sessions::probePolicy);
    this.engine = engine;
    this.sessions = sessions;
    this.v1 = v1;
    this.callers = new HttpCallers(sessions.authenticator());
  }

  /** Adds this API's routes to {@code endpoint}. */
  public void routeOn(HttpEndpoint endpoint) {
    endpoint.route(PATH, this::answer);
  }

  HttpResponse answer(HttpRequest r) {
    String route = r.path().substring(PATH.length());
    try {
      if (!route.equals("/ops/log")) {
        HttpException.refuseUnlessServing(readiness);
      }
      JsonNode data = switch (route) {
        case "/service/list" -> only(r, "GET", this::services);
        case "/service" -> switch (r.method()) {
          case "GET" -> service(r);
          case "PUT" -> updateService(r);
          default -> throw NacosHttpErrors.notAllowed(r, "GET, PUT");
        };
        case "/service/subscribers" -> only(r, "GET", this::subscribers);
        case "/instance/list" -> only(r, "GET", this::instances);
        case "/instance" -> only(r, "PUT", this::updateInstance);
        case "/client/list" -> only(r, "GET", this::clients);
        case "/ops/log" -> only(r, "PUT", rq -> {
          v1.logLevel(rq);
          return JsonEnvelope.text("ok");
        });
        default -> throw new HttpException(404, "no such path: " + r.path() + " (see docs/admin-api.md)");
      };
      return JsonEnvelope.ok(data);
    } catch (RegistryException e) {
      // The model names the threshold as the Roster protocol does; this API's parameter is Nacos's.
      RegistryException named = e.getMessage().startsWith("protect_threshold")
          ? new RegistryException(e.kind(), "protectThreshold", "protectThreshold" + e.getMessage().substring(
              "protect_threshold".length())) : e;
      return JsonEnvelope.error(NacosHttpErrors.httpError(named));
    } catch (HttpException e) {
      return JsonEnvelope.error(e);
    }
  }

  @FunctionalInterface
  private interface Route {
    JsonNode answer(HttpRequest r);
  }

  private static JsonNode only(HttpRequest r, String method, Route route) {
    if (!r.method().equals(method)) {
      throw NacosHttpErrors.notAllowed(r, method);
    }
    return route.answer(r);
  }

  // --- services ---

  /**
   * GET /service/list: a page of a namespace's services, sorted by group and name, or with
   * Roster's {@code orderBy} ({@code ipCount}, {@code healthyInstanceCount}) by that count, the
   * largest first; {@code groupNameParam} and {@code serviceNameParam} keep those whose group or
   * name contains them (any case).
   */
  private JsonNode services(HttpRequest r) {
    String namespace = r.param("namespaceId", Names.DEFAULT_NAMESPACE);
    callers.checkAll(r, Permission.READ, namespace);
    String group = r.param("groupNameParam", "").toLowerCase(Locale.ROOT);
    String name = r.param("serviceNameParam", "").toLowerCase(Locale.ROOT);
    boolean ignoreEmpty = Boolean.TRUE.equals(r.boolParam("ignoreEmptyService"));
    Predicate<ServiceKey> which = k -> k.group().toLowerCase(Locale.ROOT).contains(group)
        && k.name().toLowerCase(Locale.ROOT).contains(name)
        && (!ignoreEmpty || hasInstances(k));
    int pageNo = r.intParam("pageNo", 1, 1, Integer.MAX_VALUE);
    int pageSize = r.intParam("pageSize", 20, 1, MAX_PAGE_SIZE);
    Names.checkSimpleName(LIST_FIELDS.namespace(), namespace, Names.MAX_NAMESPACE);
    ServiceOrder order = ServiceOrder.of(r.param("orderBy", ServiceOrder.NAME));
    Registry.ServicePage page = (long) (pageNo - 1) * pageSize > Integer.MAX_VALUE
        ? registry.listServices(namespace, "", k -> false, 1, pageSize)
        : order.page(registry, namespace, which, pageNo, pageSize);
    ArrayNode items = NacosMapping.JSON.createArrayNode();
    for (ServiceKey k : page.services()) {
      items.add(serviceView(k, registry.serviceImage(k), registry.settings(k)));
    }
    return JsonEnvelope.page(page.total(), pageNo, pageSize, items);
  }

  private boolean hasInstances(ServiceKey k) {
    Registry.ServiceStats stats = registry.stats(k);
    return stats != null && stats.instanceCount() > 0;
  }

  /** Nacos's {@code ServiceView}, and what Roster adds: namespace, subscribers, threshold. */
  private ObjectNode serviceView(ServiceKey k, Registry.@Nullable ServiceImage image, ServiceSettings settings) {
    ObjectNode o = NacosMapping.JSON.createObjectNode();
    Registry.ServiceStats stats = registry.stats(k);
    o.put("namespaceId", k.namespace());
    o.put("groupName", k.group());
    o.put("name", k.name());
    o.put("clusterCount", image == null ? 0
        : image.registrations().stream().map(h -> h.instance().cluster()).distinct().count());
    o.put("ipCount", stats == null ? 0 : stats.instanceCount());
    o.put("healthyInstanceCount", stats == null ? 0 : stats.healthyCount());
    o.put("triggerFlag", registry.snapshot(k).protectThresholdReached());
    o.put("protectThreshold", settings.protectThreshold());
    o.put("subscriberCount", engine.subscriberCount(k));
    return o;
  }

  /** GET /service: a service's settings, clusters and counts; 404 for a service that is not there. */
  private JsonNode service(HttpRequest r) {
    ServiceKey k = serviceKey(r);
    callers.check(r, Permission.READ, k);
    Registry.ServiceImage image = registry.serviceImage(k);
    ServiceSettings settings = registry.settings(k);
    if (image == null && settings.equals(ServiceSettings.DEFAULT)) {
      throw new HttpException(404, "no service " + k.groupedName() + " in namespace " + k.namespace());
    }
    ObjectNode o = NacosMapping.JSON.createObjectNode();
    o.put("namespaceId", k.namespace());
    o.put("groupName", k.group());
    o.put("serviceName", k.name());
    o.put("protectThreshold", settings.protectThreshold());
    ObjectNode metadata = o.putObject("metadata");
    new TreeMap<>(settings.metadata()).forEach(metadata::put);
    o.put("ephemeral", true);
    ObjectNode selector = o.putObject("selector");
    selector.put("type", "none");
    selector.put("contextType", "NONE");
    ObjectNode clusters = o.putObject("clusterMap");
    if (image != null) {
      image.registrations().stream().map(h -> h.instance().cluster()).distinct().sorted().forEach(c -> {
        ObjectNode cluster = clusters.putObject(c);
        cluster.put("clusterName", c);
        HealthCheck check = settings.check(c);
        cluster.set("healthChecker", NacosMapping.healthCheckerJson(check));
        cluster.put("useInstancePort4Check", check.checkPort() == 0);
        if (check.checkPort() != 0) {
          cluster.put("defaultCheckPort", check.checkPort());
        }
        cluster.putObject("metadata");
      });
    }
    ObjectNode view = serviceView(k, image, settings);
    o.set("ipCount", view.get("ipCount"));
    o.set("healthyInstanceCount", view.get("healthyInstanceCount"));
    o.set("triggerFlag", view.get("triggerFlag"));
    o.set("subscriberCount", view.get("subscriberCount"));
    o.put("revision", image == null ? 0 : image.revision());
    return o;
  }

  /** PUT /service: {@code protectThreshold} and {@code metadata} (replaced when given). */
  private JsonNode updateService(HttpRequest r) {
    ServiceKey k = serviceKey(r);
    Principal who = callers.check(r, Permission.ADMIN, k);
    String metadata = r.param("metadata");
    Updates.ServiceChange change = new Updates.ServiceChange(r.doubleParam("protectThreshold"), metadata != null,
        metadata == null ? Map.of() : NamingParams.metadata(metadata));
    try {
      NacosHttpErrors.await(updates.service(k, change));
    } catch (RuntimeException e) {
      Audit.log(who, "UpdateService(admin)", k.toString(), change.describe(), String.valueOf(e.getMessage()));
      throw e;
    }
    Audit.log(who, "UpdateService(admin)", k.toString(), change.describe(), "ok");
    return JsonEnvelope.text("ok");
  }

  /** GET /service/subscribers: a page of the sessions subscribed to the service, oldest first. */
  private JsonNode subscribers(HttpRequest r) {
    ServiceKey k = serviceKey(r);
    callers.check(r, Permission.READ, k);
    int pageNo = r.intParam("pageNo", 1, 1, Integer.MAX_VALUE);
    int pageSize = r.intParam("pageSize", 20, 1, MAX_PAGE_SIZE);
    ConnectionPages.Page page = ConnectionPages.page(sessions, PAGE_FIELDS, s -> s.subscribes(k), pageNo, pageSize,
        MAX_PAGE_SIZE);
    ArrayNode items = NacosMapping.JSON.createArrayNode();
    for (Session s : page.sessions()) {
      ObjectNode o = ConnectionJson.connection(s);
      o.put("namespaceId", k.namespace());
      o.put("groupName", k.group());
      o.put("serviceName", k.name());
      items.add(o);
    }
    return JsonEnvelope.page(page.total(), pageNo, pageSize, items);
  }

  // --- instances ---

  /**
   * GET /instance/list: every instance of the service, disabled and held ones too, in order;
   * {@code clusterName} keeps one cluster's, {@code healthyOnly} the healthy ones. Each says who
   * owns it ({@code owner}: kind, connection or lease id, member) and whether an operator holds
   * it out of traffic ({@code held}).
   */
  private JsonNode instances(HttpRequest r) {
    ServiceKey k = serviceKey(r);
    callers.check(r, Permission.READ, k);
    String cluster = r.param("clusterName", "");
    boolean healthyOnly = Boolean.TRUE.equals(r.boolParam("healthyOnly"));
    ArrayNode items = NacosMapping.JSON.createArrayNode();
    Registry.ServiceImage image = registry.serviceImage(k);
    if (image != null) {
      for (Registry.Held h : image.registrations()) {
        Instance i = h.instance();
        if ((!cluster.isEmpty() && !i.cluster().equals(cluster)) || (healthyOnly && !i.healthy())) {
          continue;
        }
        ObjectNode o = NacosMapping.instanceJson(i, k);
        ObjectNode owner = o.putObject("owner");
        owner.put("kind", h.owner().kind().name().toLowerCase(Locale.ROOT));
        owner.put("id", h.owner().id());
        owner.put("member", h.owner().nodeId());
        if (!h.claim().identity().isEmpty()) {
          owner.put("identity", h.claim().identity());
        }
        o.put("held", h.operatorHeld());
        items.add(o);
      }
    }
    return items;
  }

  /** PUT /instance: an operator's change of {@code enabled}, {@code weight}, {@code metadata}. */
  private JsonNode updateInstance(HttpRequest r) {
    v1.updateInstance(r, "UpdateInstance(admin)");
    return JsonEnvelope.text("ok");
  }

  // --- connections ---

  /** GET /client/list: the ids of this member's connections, oldest first (Nacos's client ids). */
  private JsonNode clients(HttpRequest r) {
    callers.checkAll(r, Permission.ADMIN, io.roster.server.auth.Grant.ALL);
    ArrayNode ids = NacosMapping.JSON.createArrayNode();
    for (Session s : sessions.all()) {
      ids.add(s.info().connectionId());
    }
    return ids;
  }

  // --- shapes ---

  private static ServiceKey serviceKey(HttpRequest r) {
    return NamingParams.service(r.param("namespaceId", Names.DEFAULT_NAMESPACE),
        r.param("groupName", Names.DEFAULT_GROUP), r.required("serviceName"));
  }
}
