package io.roster.server;

import io.roster.server.admin.RosterAdminApi;
import io.roster.server.auth.Authenticator;
import io.roster.server.auth.IdentityAdmin;
import io.roster.server.cluster.ClusterNode;
import io.roster.server.http.HttpCallers;
import io.roster.server.http.HttpEndpoint;
import io.roster.server.metrics.MetricsApi;
import io.roster.server.metrics.ServerMetrics;
import io.roster.server.nacos.NacosAdminApi;
import io.roster.server.nacos.NacosHttpApi;
import io.roster.server.nacos.NacosNamespaces;
import io.roster.server.naming.NamespaceChanges;
import io.roster.server.push.PushEngine;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import io.roster.server.registry.Writer;
import io.roster.server.session.RequestCounters;
import io.roster.server.session.SessionManager;
import java.util.List;
import java.util.Set;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The routes of the HTTP port: metrics, the Nacos v1 naming and admin APIs, Roster's admin API,
 * the console, and how each answer is counted. Stateless; the server's wiring calls it once, on
 * the starting thread, before the port opens.
 */
final class HttpRoutes {

  private HttpRoutes() {}

  /** Adds every route to {@code http}, and counts its answers in {@code sessions}' request counters. */
  static void routeOn(HttpEndpoint http, SessionManager sessions, ServerMetrics metrics, Registry registry,
      Authenticator authenticator, Readiness readiness, NacosHttpApi nacosHttp, Writer writer, PushEngine engine,
      @Nullable ClusterNode cluster, LongSupplier wallClockMicros) {
    RequestCounters requests = sessions.requests();
    http.onAnswered((route, path, status, refusal, nanos) -> {
      RequestCounters.Protocol protocol = route.startsWith("/nacos") ? RequestCounters.Protocol.NACOS_HTTP
          : RequestCounters.Protocol.HTTP;
      String type = NACOS_PATHS.contains(path) ? path : route;
      requests.count(protocol, type, httpResult(status), refusal);
      requests.took(protocol, type, nanos);
    });
    metrics.httpRefusals(http.refusals());
    new MetricsApi(metrics, registry, new HttpCallers(authenticator), readiness).routeOn(http);
    nacosHttp.routeOn(http);
    new NacosAdminApi(registry, writer, engine, sessions, nacosHttp, readiness).routeOn(http);
    NamespaceChanges namespaces = new NamespaceChanges(registry, writer);
    java.nio.file.Path authFile = authenticator.file();
    new RosterAdminApi(registry, sessions, cluster, () -> wallClockMicros.getAsLong() / 1000, readiness, namespaces,
        authFile == null ? null : new IdentityAdmin(authenticator, authFile)).routeOn(http);
    new NacosNamespaces(registry, namespaces, new HttpCallers(authenticator), readiness).routeOn(http);
    // The console, and the URLs Nacos users open for theirs.
    http.staticFiles("/console", "console", List.of("index.html", "app.js", "common.js", "events.js", "services.js",
        "service.js", "connections.js", "i18n.js", "manage.js", "style.css"));
    for (String nacosConsole : List.of("/nacos", "/nacos/", "/nacos/index.html")) {
      http.redirect(nacosConsole, "/console/");
    }
  }

  /**
   * The Nacos v1 naming API's endpoints, counted by path; every other HTTP request counts under
   * the route it was added with, and one under no route as {@value HttpEndpoint#UNKNOWN_ROUTE}, so
   * that no path a client makes up becomes a label.
   */
  private static final Set<String> NACOS_PATHS = Set.of("/nacos/v1/ns/instance", "/nacos/v1/ns/instance/list",
      "/nacos/v1/ns/instance/beat", "/nacos/v1/ns/service/list", "/nacos/v1/ns/operator/metrics",
      "/nacos/v1/ns/operator/log");

  /** The result label of an HTTP answer's status, as the gRPC ports' results read. */
  private static String httpResult(int status) {
    return switch (status) {
      case 400, 405, 414 -> "invalid_argument";
      case 401 -> "unauthenticated";
      case 403 -> "permission_denied";
      case 404 -> "not_found";
      case 409 -> "failed_precondition";
      case 413, 429 -> "resource_exhausted";
      case 501 -> "unimplemented";
      case 503 -> "unavailable";
      default -> status < 400 ? RequestCounters.OK : status < 500 ? "invalid_argument" : "internal";
    };
  }
}
