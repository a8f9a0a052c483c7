package io.roster.server.nacos;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.roster.server.http.NamingParams;
import io.roster.server.registry.HealthCheck;
import org.jspecify.annotations.Nullable;
import io.roster.server.model.Instance;
import io.roster.server.model.Names;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Nacos's JSON shapes (as nacos-client 2.x writes and reads them) to and from Roster's model
 * records. Stateless.
 *
 * <p>Namespaces, groups and service names map one to one ({@code public} and empty are
 * Roster's default namespace, as in Nacos); a Nacos service name may carry its group as
 * {@code group@@name}. Every value goes through the model's validation, so a bad one is
 * refused with the field, the value and the limit.
 */
final class NacosMapping {

  /** Nacos's mapper settings: unknown properties ignored, nulls omitted. */
  static final ObjectMapper JSON = new ObjectMapper()
      .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
      .setDefaultPropertyInclusion(JsonInclude.Value.construct(JsonInclude.Include.NON_NULL, JsonInclude.Include.NON_NULL));

  /** {@code cacheMillis} of every ServiceInfo, as a Nacos server sends it (defaultPushCacheMillis). */
  static final long CACHE_MILLIS = 10_000;

  private NacosMapping() {}

  /**
   * The service a naming request names: {@code namespace}, {@code groupName} and {@code
   * serviceName} (which may be {@code group@@name}; its group then wins).
   */
  static ServiceKey service(JsonNode request) {
    return service(text(request, "namespace"), text(request, "groupName"), text(request, "serviceName"));
  }

  static ServiceKey service(String namespace, String groupName, String serviceName) {
    return NamingParams.groupedService(namespace, groupName, serviceName);
  }

  /**
   * A Nacos {@code Instance} as Roster's: missing fields take Nacos's defaults (weight 1,
   * healthy, enabled, cluster {@code DEFAULT}); always ephemeral (it belongs to the connection).
   * The instance id is the registry's ({@code ip#port#cluster#group@@service}).
   */
  static Instance instance(JsonNode json) {
    return instance(json, true);
  }

  /** Same, ephemeral or persistent (Nacos's {@code ephemeral} field is not read: the request says which). */
  static Instance instance(JsonNode json, boolean ephemeral) {
    if (json == null || !json.isObject()) {
      throw RegistryException.invalid("instance", json == null ? "" : json.toString(), "an instance object");
    }
    Map<String, String> metadata = new LinkedHashMap<>();
    JsonNode m = json.get("metadata");
    if (m != null && m.isObject()) {
      for (Map.Entry<String, JsonNode> e : m.properties()) {
        metadata.put(e.getKey(), e.getValue().isNull() ? "" : e.getValue().asText());
      }
    }
    JsonNode port = json.get("port");
    if (port != null && !port.canConvertToInt()) {
      throw RegistryException.invalid("instance.port", port.asText(), "1..65535");
    }
    return new Instance(
        text(json, "ip"),
        port == null ? 0 : port.asInt(),
        json.path("weight").asDouble(1.0),
        json.path("healthy").asBoolean(true),
        json.path("enabled").asBoolean(true),
        ephemeral,
        text(json, "clusterName"),
        metadata,
        ""); // assigned by the registry
  }

  /** Roster's instance of {@code service} in Nacos's JSON shape ({@code Instance}). */
  static ObjectNode instanceJson(Instance i, ServiceKey service) {
    ObjectNode o = JSON.createObjectNode();
    o.put("instanceId", i.instanceId().isEmpty() ? i.withId(service).instanceId() : i.instanceId());
    o.put("ip", i.ip());
    o.put("port", i.port());
    o.put("weight", i.weight());
    o.put("healthy", i.healthy());
    o.put("enabled", i.enabled());
    o.put("ephemeral", i.ephemeral());
    o.put("clusterName", i.cluster());
    o.put("serviceName", service.groupedName());
    ObjectNode metadata = o.putObject("metadata");
    i.sortedMetadata().forEach(metadata::put);
    o.put("instanceHeartBeatInterval", preserved(i, "preserved.heart.beat.interval", 5000));
    o.put("instanceHeartBeatTimeOut", preserved(i, "preserved.heart.beat.timeout", 15000));
    o.put("ipDeleteTimeout", preserved(i, "preserved.ip.delete.timeout", 30000));
    String generator = i.metadata().get("preserved.instance.id.generator");
    if (generator != null || i.metadata().isEmpty()) {
      o.put("instanceIdGenerator", generator != null ? generator : "simple");
    }
    return o;
  }

  private static long preserved(Instance i, String key, long defaultMillis) {
    String v = i.metadata().get(key);
    if (v == null) {
      return defaultMillis;
    }
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      return defaultMillis;
    }
  }

  /**
   * A state in Nacos's {@code ServiceInfo} shape. {@code lastRefTime} is the
   * revision's time in milliseconds (revisions are {@code max(last + 1, now in µs)}): it never
   * goes back for newer revisions, which the Nacos client needs to see a change as a change,
   * and is the same in every encoding of one revision.
   *
   * @param clusters the view's clusters filter (empty = all), told back as a comma list
   */
  static ObjectNode serviceInfo(ServiceSnapshot s, Set<String> clusters) {
    ObjectNode o = JSON.createObjectNode();
    o.put("name", s.service().name());
    o.put("groupName", s.service().group());
    o.put("clusters", String.join(",", new TreeSet<>(clusters)));
    o.put("cacheMillis", CACHE_MILLIS);
    ArrayNode hosts = o.putArray("hosts");
    for (Instance i : s.instances()) {
      hosts.add(instanceJson(i, s.service()));
    }
    o.put("lastRefTime", lastRefTime(s.revision()));
    o.put("checksum", s.checksum());
    o.put("allIPs", false);
    o.put("reachProtectionThreshold", s.protectThresholdReached());
    o.put("valid", true);
    return o;
  }

  /** The revision's time in ms; never negative. */
  static long lastRefTime(long revision) {
    return Math.max(0, revision / 1000);
  }

  /** A Nacos clusters list ({@code "a,b"}, empty = all) as a set; each name validated. */
  static Set<String> clusters(String commaList) {
    if (commaList == null || commaList.isBlank()) {
      return Set.of();
    }
    TreeSet<String> set = new TreeSet<>();
    for (String c : Arrays.asList(commaList.split(","))) {
      String t = c.trim();
      if (!t.isEmpty()) {
        set.add(Names.cluster("clusters", t));
      }
    }
    return Set.copyOf(set);
  }

  /** A string field, empty when missing or null. */
  static String text(JsonNode json, String field) {
    JsonNode v = json == null ? null : json.get(field);
    return v == null || v.isNull() ? "" : v.asText();
  }

  /**
   * A cluster's health check from Nacos's {@code PUT /nacos/v1/ns/cluster} parameters: {@code
   * healthChecker} is JSON ({@code {"type":"HTTP","path":"/health","headers":"k:v|k2:v2",
   * "expectedResponseCode":200}}, {@code {"type":"TCP"}} or {@code {"type":"NONE"}}; empty is TCP);
   * with {@code useInstancePort4Check=false} the probe goes to {@code checkPort}, else (the
   * default) to the instance's own port. A per-check {@code timeout} is refused rather than
   * ignored: every probe times out after the server's {@code --probe-timeout}. Errors name Nacos's
   * parameter.
   */
  static HealthCheck healthCheck(String healthChecker, String checkPort, @Nullable Boolean useInstancePort) {
    JsonNode json;
    try {
      json = healthChecker.isBlank() ? JSON.createObjectNode() : JSON.readTree(healthChecker);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw RegistryException.invalid("healthChecker", healthChecker, "a JSON object like {\"type\":\"TCP\"}");
    }
    if (json == null || !json.isObject()) {
      throw RegistryException.invalid("healthChecker", healthChecker, "a JSON object like {\"type\":\"TCP\"}");
    }
    JsonNode timeout = json.get("timeout");
    if (timeout != null && !timeout.isNull()) {
      // Nacos 1's checkers carried one; a probe here always times out after --probe-timeout.
      throw RegistryException.invalid("healthChecker.timeout", timeout.asText(), "no timeout: every probe of this "
          + "server times out after its --probe-timeout, whatever the check (docs/persistence.md, Server-side probes)");
    }
    String typeText = text(json, "type");
    HealthCheck.Type type = typeText.isEmpty() ? HealthCheck.Type.TCP : HealthCheck.type("healthChecker.type", typeText);
    int port = 0;
    if (Boolean.FALSE.equals(useInstancePort)) {
      try {
        port = Integer.parseInt(checkPort.trim());
      } catch (NumberFormatException e) {
        throw RegistryException.invalid("checkPort", checkPort, "1..65535 (with useInstancePort4Check=false)");
      }
      if (port < 1 || port > 65535) {
        throw RegistryException.invalid("checkPort", port, "1..65535 (with useInstancePort4Check=false)");
      }
    }
    Map<String, String> headers = new java.util.LinkedHashMap<>();
    JsonNode h = json.get("headers");
    if (h != null && h.isObject()) {
      h.properties().forEach(e -> headers.put(e.getKey(), e.getValue().asText()));
    } else if (h != null && !h.isNull() && !h.asText().isBlank()) {
      for (String pair : h.asText().split("\\|", -1)) {
        int colon = pair.indexOf(':');
        if (colon <= 0) {
          throw RegistryException.invalid("healthChecker.headers", h.asText(), "name:value pairs separated by |");
        }
        headers.put(pair.substring(0, colon).trim(), pair.substring(colon + 1).trim());
      }
    }
    JsonNode status = json.get("expectedResponseCode");
    return new HealthCheck(type, port, text(json, "path"), status == null ? 0 : status.asInt(), headers);
  }

  /** A cluster's health check in Nacos's JSON shape ({@code healthChecker}). */
  static ObjectNode healthCheckerJson(HealthCheck c) {
    ObjectNode o = JSON.createObjectNode();
    o.put("type", c.type().name());
    if (c.type() == HealthCheck.Type.HTTP) {
      o.put("path", c.path());
      StringBuilder headers = new StringBuilder();
      new java.util.TreeMap<>(c.headers()).forEach((k, v) -> headers.append(headers.length() == 0 ? "" : "|")
          .append(k).append(':').append(v));
      o.put("headers", headers.toString());
      o.put("expectedResponseCode", c.expectedStatus());
    }
    return o;
  }
}
