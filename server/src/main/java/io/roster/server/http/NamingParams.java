package io.roster.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Names;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The parameters by which an HTTP request names a service and an instance, read the same way by
 * the Nacos v1 open API and by both admin APIs (decision 90): {@code namespaceId}, {@code
 * groupName} and {@code serviceName} (which may be {@code group@@name}; its group then wins),
 * {@code ip}, {@code port} and {@code clusterName}, and Nacos's {@code metadata}. A bad one is a
 * 400 naming it, or the model's refusal with the parameter's name. Stateless.
 */
public final class NamingParams {

  private static final String GROUP_SEPARATOR = "@@";

  private NamingParams() {}

  /** The service a request names: {@code namespaceId}, {@code groupName}, {@code serviceName}; 400 naming a bad one. */
  public static ServiceKey service(HttpRequest r) {
    return service(r, "");
  }

  /** The service a request names, {@code fallbackName} where it has no {@code serviceName}. */
  public static ServiceKey service(HttpRequest r, String fallbackName) {
    String name = r.param("serviceName", fallbackName);
    if (name.isEmpty()) {
      throw HttpException.badParameter("serviceName", null, "a service name, optionally group@@name");
    }
    return service(r.param("namespaceId", Names.DEFAULT_NAMESPACE), r.param("groupName", Names.DEFAULT_GROUP), name);
  }

  /** The service of these parameters; a refused namespace is named as the request names it. */
  public static ServiceKey service(String namespace, String group, String name) {
    try {
      return groupedService(namespace, group, name);
    } catch (RegistryException e) {
      throw renamed(e, "namespace", "namespaceId");
    }
  }

  /**
   * The service of a Nacos namespace, group and service name, which may be {@code group@@name}
   * (its group then wins); a refusal names the field as Nacos does: {@code namespace}, {@code
   * groupName} or {@code serviceName}.
   */
  public static ServiceKey groupedService(String namespace, String groupName, String serviceName) {
    String group = groupName;
    String name = serviceName;
    int at = name.indexOf(GROUP_SEPARATOR);
    if (at >= 0) {
      group = name.substring(0, at);
      name = name.substring(at + GROUP_SEPARATOR.length());
    }
    try {
      return ServiceKey.of(namespace, group, name);
    } catch (RegistryException e) {
      throw renamed(e);
    }
  }

  /** Roster's field names in a refusal ({@code service.name}) as the Nacos request names them. */
  private static RegistryException renamed(RegistryException e) {
    String field = switch (e.field()) {
      case "service.namespace" -> "namespace";
      case "service.group" -> "groupName";
      case "service.name" -> "serviceName";
      default -> e.field();
    };
    String message = e.getMessage().startsWith(e.field() + ":")
        ? field + e.getMessage().substring(e.field().length()) : e.getMessage();
    return new RegistryException(e.kind(), field, message);
  }

  /** The instance a request names: {@code ip}, {@code port}, {@code clusterName}; 400 naming a bad one. */
  public static InstanceKey instanceKey(HttpRequest r) {
    String ip = r.required("ip");
    int port = port(r);
    String cluster = r.param("clusterName", r.param("cluster", Names.DEFAULT_CLUSTER));
    return new InstanceKey(ip, port, Names.cluster("clusterName", cluster));
  }

  /** The {@code port} parameter: 1..65535. */
  public static int port(HttpRequest r) {
    return port("port", r.required("port"));
  }

  /** A port named {@code name}: 1..65535, or 400 naming it. */
  public static int port(String name, String value) {
    try {
      int p = Integer.parseInt(value.trim());
      if (p >= 1 && p <= 65535) {
        return p;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw HttpException.badParameter(name, value, "1..65535");
  }

  /**
   * Nacos's metadata parameter: a JSON object of scalars (a number or boolean is kept as its text),
   * or {@code k1=v1,k2=v2}; a nested object or array is refused, as Nacos refuses it.
   */
  public static Map<String, String> metadata(String text) {
    Map<String, String> m = new LinkedHashMap<>();
    String t = text.trim();
    if (t.isEmpty()) {
      return m;
    }
    if (t.startsWith("{")) {
      JsonNode node = json("metadata", t, "a JSON object or k1=v1,k2=v2");
      for (Map.Entry<String, JsonNode> e : node.properties()) {
        if (e.getValue().isContainerNode()) { // Nacos reads a map of strings: no object or array in it
          throw HttpException.badParameter("metadata", text, "a JSON object of strings, numbers or booleans (\""
              + e.getKey() + "\" holds " + (e.getValue().isArray() ? "an array" : "an object") + ")");
        }
        m.put(e.getKey(), e.getValue().isNull() ? "" : e.getValue().asText());
      }
    } else {
      for (String pair : t.split(",", 0)) { // limit 0: a trailing comma is allowed
        int eq = pair.indexOf('=');
        if (eq <= 0 || pair.indexOf('=', eq + 1) >= 0) {
          throw HttpException.badParameter("metadata", text, "a JSON object or k1=v1,k2=v2");
        }
        m.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
      }
    }
    Names.checkMetadata("metadata", m);
    return m;
  }

  /** The JSON object a parameter named {@code name} carries, or 400 naming it. */
  public static JsonNode json(String name, String text, String expected) {
    try {
      JsonNode node = JsonEnvelope.JSON.readTree(text);
      if (node != null && node.isObject()) {
        return node;
      }
    } catch (JsonProcessingException e) {
      // below
    }
    throw HttpException.badParameter(name, text, expected);
  }

  /**
   * The refusal with the model's field names as this API's parameters: {@code instance.port}
   * is {@code port}, {@code instance.cluster} is {@code clusterName}.
   */
  public static RegistryException renamed(RegistryException e, String prefix, String replacement) {
    String message = e.getMessage();
    if (message.startsWith(prefix)) {
      message = replacement + message.substring(prefix.length());
      if (message.startsWith("cluster:")) {
        message = "clusterName" + message.substring("cluster".length());
      }
    }
    return new RegistryException(e.kind(), e.field(), message);
  }
}
