package io.roster.server.metrics;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.roster.server.auth.Grant;
import io.roster.server.auth.Permission;
import io.roster.server.http.HttpCallers;
import io.roster.server.http.HttpEndpoint;
import io.roster.server.http.HttpException;
import io.roster.server.http.HttpRequest;
import io.roster.server.http.HttpResponse;
import io.roster.server.http.JsonEnvelope;
import io.roster.server.model.Instance;
import io.roster.server.model.Names;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The HTTP routes for Prometheus (docs/observability.md): {@code GET /metrics}, the server's
 * metrics, and {@code GET /roster/v1/prometheus/sd}, the instances of a namespace, group or
 * service in Prometheus's HTTP service discovery format, so that Prometheus scrapes what is
 * registered here.
 *
 * <p>With auth on, {@code /metrics} needs read on every namespace ({@code *}: the metrics name
 * namespaces and count their instances), and discovery needs read on what it lists. Discovery
 * answers 503 naming why while the server's registry may not be read (a cluster member that has
 * not joined, or is catching up); the metrics are this process's, and are always served.
 */
public final class MetricsApi {

  /** The discovery route. */
  public static final String SD_PATH = "/roster/v1/prometheus/sd";
  /** Discovered targets at most per answer; a larger namespace is asked for by group or service. */
  static final int MAX_TARGETS = 50_000;
  private static final String META = "__meta_roster_";

  private final ServerMetrics metrics;
  private final Registry registry;
  private final HttpCallers callers;
  private final Readiness readiness;

  public MetricsApi(ServerMetrics metrics, Registry registry, HttpCallers callers, Readiness readiness) {
    this.readiness = readiness;
    this.metrics = metrics;
    this.registry = registry;
    this.callers = callers;
  }

  /** Adds the routes to {@code http}. */
  public void routeOn(HttpEndpoint http) {
    http.route("/metrics", this::metrics);
    http.route(SD_PATH, this::discover);
  }

  private HttpResponse metrics(HttpRequest r) {
    if (!r.path().equals("/metrics")) {
      throw new HttpException(404, "no such path: " + r.path() + " (the metrics are at /metrics)");
    }
    requireGet(r);
    callers.checkAll(r, Permission.READ, Grant.ALL);
    ServerMetrics.Exposition e = metrics.scrape(r.accept());
    return new HttpResponse(200, e.contentType(), e.text());
  }

  /**
   * {@code [{"targets":["ip:port"],"labels":{...}}, ...]}: one group per instance, every instance
   * (unhealthy and disabled ones too, labelled, so that a relabel rule decides), sorted by service
   * then instance.
   */
  private HttpResponse discover(HttpRequest r) {
    requireGet(r);
    HttpException.refuseUnlessServing(readiness);
    String namespace = r.param("namespace", Names.DEFAULT_NAMESPACE);
    String group = r.param("group", "");
    String service = r.param("service", "");
    Set<String> keys = metadataKeys(r.param("metadata"));
    List<ServiceKey> services;
    if (!service.isEmpty()) {
      ServiceKey key = ServiceKey.of(namespace, group.isEmpty() ? Names.DEFAULT_GROUP : group, service);
      callers.check(r, Permission.READ, key);
      services = List.of(key);
    } else {
      callers.checkAll(r, Permission.READ, namespace);
      services = registry.listServices(namespace, group, 1, Integer.MAX_VALUE).services();
    }
    ArrayNode groups = JsonEnvelope.JSON.createArrayNode();
    for (ServiceKey key : services) {
      Registry.ServiceImage image = registry.serviceImage(key);
      if (image == null) {
        continue;
      }
      List<Instance> instances = new java.util.ArrayList<>(image.registrations().size());
      image.registrations().forEach(h -> instances.add(h.instance()));
      instances.sort(Instance.ORDER);
      for (Instance i : instances) {
        if (groups.size() >= MAX_TARGETS) {
          throw new HttpException(400, "namespace " + namespace + (group.isEmpty() ? "" : " group " + group)
              + " has more than " + MAX_TARGETS + " instances (the limit of one answer); ask for one group or service");
        }
        groups.add(target(key, i, keys));
      }
    }
    return HttpResponse.json(groups.toString());
  }

  private static ObjectNode target(ServiceKey key, Instance i, Set<String> keys) {
    ObjectNode g = JsonEnvelope.JSON.createObjectNode();
    g.putArray("targets").add(i.ip().indexOf(':') >= 0 ? "[" + i.ip() + "]:" + i.port() : i.ip() + ":" + i.port());
    ObjectNode labels = g.putObject("labels");
    labels.put(META + "namespace", key.namespace());
    labels.put(META + "group", key.group());
    labels.put(META + "service", key.name());
    labels.put(META + "cluster", i.cluster());
    labels.put(META + "healthy", Boolean.toString(i.healthy()));
    labels.put(META + "enabled", Boolean.toString(i.enabled()));
    labels.put(META + "weight", Double.toString(i.weight()));
    for (Map.Entry<String, String> m : i.sortedMetadata().entrySet()) {
      if (keys.isEmpty() || keys.contains(m.getKey())) {
        labels.put(META + "metadata_" + labelName(m.getKey()), m.getValue());
      }
    }
    return g;
  }

  /**
   * A metadata key as a label name: every character but ASCII letters, digits and {@code _}
   * becomes {@code _} (Prometheus's label names are {@code [a-zA-Z_][a-zA-Z0-9_]*}; the prefix
   * supplies the first character).
   */
  static String labelName(String key) {
    StringBuilder b = new StringBuilder(key.length());
    for (int k = 0; k < key.length(); k++) {
      char c = key.charAt(k);
      b.append((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ? c : '_');
    }
    return b.toString();
  }

  private static Set<String> metadataKeys(@org.jspecify.annotations.Nullable String param) {
    if (param == null || param.isBlank()) {
      return Set.of();
    }
    Set<String> keys = new LinkedHashSet<>();
    for (String k : param.split(",", -1)) {
      if (!k.isBlank()) {
        keys.add(k.strip());
      }
    }
    return keys;
  }

  private static void requireGet(HttpRequest r) {
    if (!r.method().equals("GET") && !r.method().equals("HEAD")) {
      throw new HttpException(405, r.method() + " " + r.path() + " is not served (expected: GET)");
    }
  }
}
