package io.roster.server.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.roster.server.auth.Audit;
import io.roster.server.auth.Grant;
import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.cluster.Members;
import io.roster.server.http.ConnectionJson;
import io.roster.server.http.EventSink;
import io.roster.server.http.HttpCallers;
import io.roster.server.http.HttpEndpoint;
import io.roster.server.http.HttpException;
import io.roster.server.http.HttpRequest;
import io.roster.server.http.HttpResponse;
import io.roster.server.http.JsonEnvelope;
import io.roster.server.http.NamingParams;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Names;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.naming.ConnectionPages;
import io.roster.server.naming.DrainTimeouts;
import io.roster.server.registry.Change;
import io.roster.server.registry.Registry;
import io.roster.server.store.Backup;
import io.roster.server.session.SessionInfo;
import io.roster.server.session.SessionManager;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * What Roster's admin API adds to Nacos's ({@code /roster/v1/admin/...}): namespaces with their
 * counts, created, edited and deleted ({@link NamespacesApi}), the auth file's users, tokens and
 * grants for an admin of every namespace ({@link IdentitiesApi}), the cluster's members (role,
 * lag, sessions), this member's connections, paged and
 * searchable, a drain whose progress a page can follow, and a stream of the registry's changes
 * for pages that follow it live. The same envelope as the Nacos-shaped routes ({@link
 * JsonEnvelope}); what each route needs is in docs/admin-api.md. While the server's registry may
 * not be read (a cluster member that has not joined, or is catching up), every route answers 503
 * naming why. Thread-safe.
 */
public final class RosterAdminApi {

  /** The path prefix. */
  public static final String PATH = "/roster/v1/admin";
  /** How long a finished drain's state is kept for {@code GET /drain}. */
  static final Duration DRAIN_KEPT = Duration.ofMinutes(10);
  /** The path of the change stream. */
  public static final String EVENTS = PATH + "/events";
  /** The largest page of connections. */
  static final int MAX_PAGE_SIZE = 500;

  private static final ConnectionPages.Fields PAGE_FIELDS = new ConnectionPages.Fields("pageNo", "pageSize");

  private final Registry registry;
  private final SessionManager sessions;
  private final @Nullable Members cluster;
  private final HttpCallers callers;
  private final NamespacesApi namespaces;
  private final IdentitiesApi identities;
  private final java.util.function.LongSupplier wallClockMillis;
  private final io.roster.server.registry.Readiness readiness;
  /**
   * How long a change of members may take (a member added catches up before it commits): with
   * the check of each member added, the answer comes before the HTTP port's idle timeout closes
   * the connection (30 s). A change still in progress then may yet complete; the answer says so.
   */
  private static final java.time.Duration MEMBER_CHANGE_TIMEOUT = java.time.Duration.ofSeconds(20);
  private final Set<Follower> followers = new CopyOnWriteArraySet<>();
  /** Drains started here, by id: their last state, for a while (Caffeine: bounded and expiring). */
  private final Cache<String, ObjectNode> drains = Caffeine.newBuilder().maximumSize(1000)
      .expireAfterWrite(DRAIN_KEPT).build();
  private final AtomicLong drainIds = new AtomicLong();

  /**
   * @param cluster the cluster as this member sees it, or null when standalone
   * @param readiness whether the server serves now
   */
  public RosterAdminApi(Registry registry, SessionManager sessions, @Nullable Members cluster,
      java.util.function.LongSupplier wallClockMillis, io.roster.server.registry.Readiness readiness,
      io.roster.server.naming.NamespaceChanges namespaceChanges, io.roster.server.auth.@Nullable IdentityAdmin identities) {
    this.readiness = readiness;
    this.registry = registry;
    this.sessions = sessions;
    this.cluster = cluster;
    this.wallClockMillis = wallClockMillis;
    this.callers = new HttpCallers(sessions.authenticator());
    this.namespaces = new NamespacesApi(registry, namespaceChanges, callers);
    this.identities = new IdentitiesApi(identities, callers, sessions::nodeId);
  }

  /** Adds this API's routes to {@code endpoint}, and starts following the registry for its event stream. */
  public void routeOn(HttpEndpoint endpoint) {
    endpoint.route(PATH, this::answer);
    endpoint.events(EVENTS, this::openEvents);
    registry.addListener(this::onChange);
  }

  /**
   * GET /events?namespaceId=NS: a stream of server-sent events, one {@code service} event per
   * change of a service of that namespace ({@code {"namespaceId","groupName","name","kind",
   * "revision"}}), so that a page showing it fetches it again; {@code read} on the namespace.
   */
  private void openEvents(HttpRequest r, EventSink sink) {
    HttpException.refuseUnlessServing(readiness);
    String namespace = r.param("namespaceId", Names.DEFAULT_NAMESPACE);
    callers.checkAll(r, Permission.READ, namespace);
    Follower f = new Follower(namespace, sink);
    followers.add(f);
    sink.onClose(() -> followers.remove(f));
  }

  private record Follower(String namespace, EventSink sink) {}

  private void onChange(Change change) {
    if (followers.isEmpty()) {
      return;
    }
    ServiceKey k = change.service();
    String data = null;
    for (Follower f : followers) {
      if (change.kind() != Change.Kind.RESTORED && !f.namespace().equals(k.namespace())) {
        continue;
      }
      if (data == null) {
        ObjectNode o = JsonEnvelope.JSON.createObjectNode();
        o.put("namespaceId", k.namespace());
        o.put("groupName", k.group());
        o.put("name", k.name());
        o.put("kind", change.kind().name().toLowerCase(Locale.ROOT));
        o.put("revision", change.revision());
        data = o.toString();
      }
      f.sink().send("service", data, k.toString()); // a page needs the latest change of a service once
    }
  }

  HttpResponse answer(HttpRequest r) {
    String route = r.path().substring(PATH.length());
    try {
      HttpException.refuseUnlessServing(readiness);
      if (route.equals("/drain")) {
        return JsonEnvelope.ok(switch (r.method()) {
          case "POST" -> startDrain(r);
          case "GET" -> drain(r);
          default -> throw new HttpException(405, r.method() + " " + r.path() + " is not served (expected: GET, POST)");
        });
      }
      if (route.equals("/namespaces")) {
        return JsonEnvelope.ok(namespaces.answer(r));
      }
      if (route.startsWith("/identities")) {
        return JsonEnvelope.ok(identities.answer(r, route));
      }
      if (route.equals("/members") && r.method().equals("POST")) {
        return JsonEnvelope.ok(changeMembers(r));
      }
      if (!r.method().equals("GET")) {
        throw new HttpException(405, r.method() + " " + r.path() + " is not served (expected: GET)");
      }
      if (route.equals("/permissions")) {
        return JsonEnvelope.ok(PermissionsAnswer.of(r, callers.who(r), registry));
      }
      callers.checkAll(r, Permission.ADMIN, Grant.ALL);
      if (route.equals("/backup")) {
        // The durable state, as --restore reads it back (docs/persistence.md, "Backup and restore").
        return HttpResponse.json(Backup.json(Backup.take(registry, sessions.nodeId(), wallClockMillis.getAsLong())));
      }
      JsonNode data = switch (route) {
        case "/members" -> members();
        case "/connections" -> connections(r);
        case "/connection" -> ConnectionDetail.of(r.required("connectionId"), sessions, registry);
        default -> throw new HttpException(404, "no such path: " + r.path() + " (see docs/admin-api.md)");
      };
      return JsonEnvelope.ok(data);
    } catch (RegistryException e) {
      return JsonEnvelope.error(route.equals("/namespaces") || route.startsWith("/identities") ? NamespacesApi.status(e)
          : new HttpException(400, e.getMessage()));
    } catch (HttpException e) {
      return JsonEnvelope.error(e);
    }
  }

  // --- drain ---

  /**
   * POST /drain: takes an instance out of traffic and waits, up to {@code timeoutMs}, for every
   * subscriber to acknowledge; answers at once with the drain's {@code id}. Its progress comes as
   * {@code drain} events on the namespace's stream and from {@code GET /drain?id=}: {@code
   * state} {@code started} (with {@code notified}, the subscribers pushed), {@code acked}, then
   * {@code done} (with {@code acked}, {@code timedOut}, {@code disconnected}), or {@code
   * not-registered} or {@code failed}. Needs {@code admin} on the service.
   */
  private JsonNode startDrain(HttpRequest r) {
    ServiceKey service = NamingParams.service(r);
    InstanceKey key = NamingParams.instanceKey(r);
    Principal who = callers.check(r, Permission.ADMIN, service);
    String timeoutText = r.param("timeoutMs", "");
    long timeoutMs;
    try {
      timeoutMs = timeoutText.isEmpty() ? 0 : Long.parseLong(timeoutText.trim());
    } catch (NumberFormatException e) {
      throw HttpException.badParameter("timeoutMs", timeoutText, "milliseconds, 0 for the default");
    }
    Duration timeout = DrainTimeouts.timeout("timeoutMs", timeoutMs);
    String id = "drain-" + drainIds.incrementAndGet();
    ObjectNode state = JsonEnvelope.JSON.createObjectNode();
    state.put("id", id);
    state.put("namespaceId", service.namespace());
    state.put("groupName", service.group());
    state.put("serviceName", service.name());
    state.put("ip", key.ip());
    state.put("port", key.port());
    state.put("clusterName", key.cluster());
    drains.put(id, state.deepCopy().put("state", "starting"));
    sessions.drainInstance(service, key, timeout, new SessionManager.DrainProgress() {
      @Override
      public void started(int notified) {
        tell(service, state.deepCopy().put("state", "started").put("notified", notified).put("acked", 0));
      }

      @Override
      public void acked(int acked) {
        ObjectNode last = drains.getIfPresent(id);
        tell(service, state.deepCopy().put("state", "acked")
            .put("notified", last == null ? 0 : last.path("notified").asInt()).put("acked", acked));
      }
    }).whenComplete((counts, failed) -> {
      Audit.log(who, "DrainInstance(admin)", service + " " + key, "", failed != null
          ? String.valueOf(failed.getMessage()) : counts == null ? "not registered" : "ok (" + counts + ")");
      if (failed != null) {
        tell(service, state.deepCopy().put("state", "failed").put("message", String.valueOf(failed.getMessage())));
      } else if (counts == null) {
        tell(service, state.deepCopy().put("state", "not-registered"));
      } else {
        tell(service, state.deepCopy().put("state", "done").put("notified", counts.notified())
            .put("acked", counts.acked()).put("timedOut", counts.timedOut()).put("disconnected", counts.disconnected()));
      }
    });
    return state.put("state", "starting");
  }

  /** GET /drain?id=: a drain's last state (kept 10 minutes after it last changed). */
  private JsonNode drain(HttpRequest r) {
    String id = r.required("id");
    ObjectNode state = drains.getIfPresent(id);
    if (state == null) {
      throw new HttpException(404, "no drain " + id + " (a drain's state is kept " + DRAIN_KEPT.toMinutes()
          + " minutes)");
    }
    callers.check(r, Permission.READ, ServiceKey.of(state.path("namespaceId").asText(),
        state.path("groupName").asText(), state.path("serviceName").asText()));
    return state;
  }

  private void tell(ServiceKey service, ObjectNode state) {
    drains.put(state.path("id").asText(), state);
    String data = state.toString();
    for (Follower f : followers) {
      if (f.namespace().equals(service.namespace())) {
        f.sink().send("drain", data, "drain " + state.path("id").asText()); // its latest state
      }
    }
  }

  /**
   * POST /members: adds ({@code add}, comma-separated {@code --members} entries) and removes
   * ({@code remove}, comma-separated member ids) members of the cluster at runtime; answers the
   * members as {@code GET /members} does. Needs {@code admin} on every namespace.
   */
  private JsonNode changeMembers(HttpRequest r) {
    Principal who = callers.checkAll(r, Permission.ADMIN, Grant.ALL);
    Members c = cluster;
    if (c == null) {
      throw new HttpException(400, "a standalone server has no members to change (docs/cluster.md)");
    }
    List<String> add = list(r.param("add", ""));
    List<String> remove = list(r.param("remove", ""));
    if (add.isEmpty() && remove.isEmpty()) {
      throw HttpException.badParameter("add", null, "host:peerPort or id=host:peerPort entries to add, or remove=ids");
    }
    String change = "add=" + add + " remove=" + remove;
    try {
      List<String> now = c.changeMembers(add, remove, MEMBER_CHANGE_TIMEOUT);
      Audit.log(who, "ChangeMembers", "cluster", change, "ok: " + now);
    } catch (IllegalArgumentException e) {
      Audit.log(who, "ChangeMembers", "cluster", change, String.valueOf(e.getMessage()));
      throw new HttpException(400, String.valueOf(e.getMessage()));
    } catch (java.io.IOException | RuntimeException e) {
      Audit.log(who, "ChangeMembers", "cluster", change, String.valueOf(e.getMessage()));
      throw new HttpException(503, "the change did not complete: " + e.getMessage()
          + "; GET /roster/v1/admin/members shows where the group stands");
    }
    return members();
  }

  private static List<String> list(String commaList) {
    List<String> items = new java.util.ArrayList<>();
    for (String s : commaList.split(",", -1)) {
      if (!s.isBlank()) {
        items.add(s.trim());
      }
    }
    return items;
  }

  /** GET /members: whether this member takes writes, and every member as it sees them. */
  private JsonNode members() {
    ObjectNode o = JsonEnvelope.JSON.createObjectNode();
    ArrayNode items = o.putArray("members");
    if (cluster == null) {
      o.put("writable", true);
      ObjectNode self = items.addObject();
      self.put("id", sessions.nodeId());
      self.put("self", true);
      self.put("role", "leader");
      self.put("sessions", sessions.count());
      return o;
    }
    String why = cluster.unwritable();
    o.put("writable", why == null);
    if (why != null) {
      o.put("unwritableReason", why);
    }
    for (Members.MemberView m : cluster.members()) {
      ObjectNode v = items.addObject();
      v.put("id", m.id());
      v.put("self", m.self());
      v.put("role", m.role());
      v.put("clientAddress", m.clientAddress());
      v.put("incarnation", m.incarnation());
      v.put("down", m.down());
      v.put("lastContactMs", m.lastContactMs());
      v.put("lag", m.lag());
      v.put("sessions", m.sessions());
    }
    return o;
  }

  /**
   * GET /connections: a page of this member's connections, oldest first; {@code search} keeps
   * those whose client id, client name, namespace or address contains it (any case).
   */
  private JsonNode connections(HttpRequest r) {
    String search = r.param("search", "").toLowerCase(Locale.ROOT);
    int pageNo = r.intParam("pageNo", 1, 1, Integer.MAX_VALUE);
    int pageSize = r.intParam("pageSize", 20, 1, MAX_PAGE_SIZE);
    ConnectionPages.Page page = ConnectionPages.page(sessions, PAGE_FIELDS, s -> matches(s.info(), search), pageNo,
        pageSize, MAX_PAGE_SIZE);
    ArrayNode items = JsonEnvelope.JSON.createArrayNode();
    page.sessions().forEach(s -> items.add(ConnectionJson.connection(s)));
    return JsonEnvelope.page(page.total(), pageNo, pageSize, items);
  }

  private static boolean matches(SessionInfo i, String search) {
    return search.isEmpty() || i.clientId().toLowerCase(Locale.ROOT).contains(search)
        || i.clientName().toLowerCase(Locale.ROOT).contains(search)
        || i.namespace().toLowerCase(Locale.ROOT).contains(search)
        || i.remoteAddress().toLowerCase(Locale.ROOT).contains(search);
  }
}
