package io.roster.server.nacos;

import static io.roster.server.nacos.NacosHttpErrors.await;

import io.roster.server.auth.Audit;
import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.http.HttpCallers;
import io.roster.server.http.HttpException;
import io.roster.server.http.HttpRequest;
import io.roster.server.http.HttpResponse;
import io.roster.server.http.NamingParams;
import io.roster.server.model.ServiceKey;
import io.roster.server.naming.Updates;
import io.roster.server.registry.HealthCheck;
import io.roster.server.registry.Registry;
import io.roster.server.registry.ServiceSettings;
import java.util.HashMap;
import java.util.Map;

/**
 * Nacos v1's {@code POST} and {@code DELETE /nacos/v1/ns/service}. A Roster service exists while
 * it has instances or settings of its own, so creating one sets its settings (protect
 * threshold, metadata) and deleting one puts them back to the defaults; a service that has
 * instances is not deleted. Both need {@code admin} on the service. Stateless; thread-safe.
 */
final class NacosServiceRoutes {

  private final Registry registry;
  private final Updates updates;
  private final HttpCallers callers;

  NacosServiceRoutes(Registry registry, Updates updates, HttpCallers callers) {
    this.registry = registry;
    this.updates = updates;
    this.callers = callers;
  }

  HttpResponse answer(HttpRequest r) {
    return switch (r.method()) {
      case "POST" -> create(r);
      case "DELETE" -> delete(r);
      default -> throw NacosHttpErrors.notAllowed(r, "POST, DELETE");
    };
  }

  /** POST: a new service with {@code protectThreshold} (0) and {@code metadata}; 400 when it exists. */
  private HttpResponse create(HttpRequest r) {
    ServiceKey k = NamingParams.service(r);
    Principal who = callers.check(r, Permission.ADMIN, k);
    if (exists(k)) {
      throw new HttpException(400, "service " + k.groupedName() + " already exists in namespace " + k.namespace());
    }
    Double threshold = r.doubleParam("protectThreshold");
    String metadata = r.param("metadata", "");
    Updates.ServiceChange change = new Updates.ServiceChange(threshold == null ? 0.0 : threshold, true,
        NamingParams.metadata(metadata));
    apply(who, "CreateService(HTTP)", k, change);
    return HttpResponse.text(200, "ok");
  }

  /** DELETE: the service's settings back to the defaults; 400 naming its instances while it has any. */
  private HttpResponse delete(HttpRequest r) {
    ServiceKey k = NamingParams.service(r);
    Principal who = callers.check(r, Permission.ADMIN, k);
    Registry.ServiceStats stats = registry.stats(k);
    int instances = stats == null ? 0 : stats.instanceCount();
    if (instances > 0) {
      throw new HttpException(400, "service " + k.groupedName() + " has " + instances + " instance"
          + (instances == 1 ? "" : "s") + " in namespace " + k.namespace() + ": deregister them first");
    }
    ServiceSettings settings = registry.settings(k);
    if (settings.equals(ServiceSettings.DEFAULT)) {
      throw new HttpException(404, "no service " + k.groupedName() + " in namespace " + k.namespace());
    }
    Map<String, HealthCheck> checks = new HashMap<>();
    settings.checks().keySet().forEach(cluster -> checks.put(cluster, HealthCheck.DEFAULT)); // a default check is none of its own
    apply(who, "DeleteService(HTTP)", k, new Updates.ServiceChange(0.0, true, Map.of(), checks));
    return HttpResponse.text(200, "ok");
  }

  private boolean exists(ServiceKey k) {
    Registry.ServiceStats stats = registry.stats(k);
    return (stats != null && stats.instanceCount() > 0) || !registry.settings(k).equals(ServiceSettings.DEFAULT);
  }

  private void apply(Principal who, String action, ServiceKey k, Updates.ServiceChange change) {
    try {
      await(updates.service(k, change));
    } catch (RuntimeException e) {
      Audit.log(who, action, k.toString(), change.describe(), String.valueOf(e.getMessage()));
      throw e;
    }
    Audit.log(who, action, k.toString(), change.describe(), "ok");
  }
}
