package io.roster.server.registry;

import io.roster.server.model.RegistryException;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * How the server probes the persistent instances of one cluster of a service (docs/persistence.md,
 * "Server-side probes"). Immutable and always valid: the compact constructor checks every field
 * and names it in its error. A probe only ever goes to the instance's own address, on its port or
 * on {@code checkPort}; an HTTP probe sends one GET of a relative {@code path} with the given
 * headers, reads only the status line and follows no redirect.
 *
 * @param type TCP (connect, the default), HTTP (GET) or NONE (health set through the API only)
 * @param checkPort the port to probe, 1..65535; 0 probes the instance's own port
 * @param path HTTP only: an absolute path with an optional query ({@code /health?deep=1})
 * @param expectedStatus HTTP only: the status that means healthy (100..599)
 * @param headers HTTP only: extra request headers (not Host, Connection and the like, which the
 *     probe sets itself)
 */
public record HealthCheck(Type type, int checkPort, String path, int expectedStatus, Map<String, String> headers) {

  /** What a probe does. */
  public enum Type { TCP, HTTP, NONE }

  /** A TCP connect to the instance's own port: what a cluster without a check of its own gets. */
  public static final HealthCheck DEFAULT = new HealthCheck(Type.TCP, 0, "", 200, Map.of());

  public static final int MAX_PATH = 256;
  public static final int MAX_HEADERS = 8;
  public static final int MAX_HEADER_NAME = 64;
  public static final int MAX_HEADER_VALUE = 256;
  /** Headers the probe writes itself, or that would change what the request is. */
  static final Set<String> RESERVED = Set.of("host", "connection", "content-length", "transfer-encoding", "upgrade",
      "te", "trailer", "expect", "keep-alive", "proxy-connection", "proxy-authorization");

  public HealthCheck {
    if (type == null) {
      throw RegistryException.invalid("health_check.type", "", "TCP, HTTP or NONE");
    }
    if (checkPort < 0 || checkPort > 65535) {
      throw RegistryException.invalid("health_check.check_port", checkPort, "1..65535, or 0 for the instance's port");
    }
    path = path == null ? "" : path;
    headers = headers == null ? Map.of() : headers;
    if (type == Type.HTTP) {
      path = path.isEmpty() ? "/" : path;
      checkPath(path);
      if (expectedStatus == 0) {
        expectedStatus = 200;
      }
      if (expectedStatus < 100 || expectedStatus > 599) {
        throw RegistryException.invalid("health_check.expected_status", expectedStatus, "100..599 (0 means 200)");
      }
      checkHeaders(headers);
      headers = Map.copyOf(new TreeMap<>(headers));
    } else {
      // Only an HTTP probe sends them: a TCP or NONE check keeps none, whatever a client sent.
      path = "";
      expectedStatus = 200;
      headers = Map.of();
    }
  }

  /** A TCP connect to {@code checkPort} (0: the instance's port). */
  public static HealthCheck tcp(int checkPort) {
    return new HealthCheck(Type.TCP, checkPort, "", 200, Map.of());
  }

  /** An HTTP GET of {@code path}, healthy on {@code expectedStatus}. */
  public static HealthCheck http(int checkPort, String path, int expectedStatus, Map<String, String> headers) {
    return new HealthCheck(Type.HTTP, checkPort, path, expectedStatus, headers);
  }

  /** No probe: health is what the API last set. */
  public static final HealthCheck NONE = new HealthCheck(Type.NONE, 0, "", 200, Map.of());

  /** The port a probe of an instance on {@code instancePort} goes to. */
  public int port(int instancePort) {
    return checkPort == 0 ? instancePort : checkPort;
  }

  /** The type named in {@code text}, any case; a clear error naming {@code field} otherwise. */
  public static Type type(String field, String text) {
    try {
      return Type.valueOf(text.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw RegistryException.invalid(field, text, "TCP, HTTP or NONE");
    }
  }

  /** What keeping it costs, roughly, in heap bytes (see {@link ServiceSettings#footprint}). */
  long footprint() {
    long chars = path.length();
    for (Map.Entry<String, String> e : headers.entrySet()) {
      chars += e.getKey().length() + e.getValue().length();
    }
    return 2 * chars + 96 + 96L * headers.size();
  }

  private static void checkPath(String path) {
    String expected = "a relative path of 1.." + MAX_PATH + " printable ASCII characters that starts with one \"/\"";
    if (path.length() > MAX_PATH || path.charAt(0) != '/' || path.startsWith("//")) {
      throw RegistryException.invalid("health_check.path", path, expected);
    }
    for (int i = 0; i < path.length(); i++) {
      char c = path.charAt(i);
      if (c <= ' ' || c >= 0x7f || c == '#') {
        throw RegistryException.invalid("health_check.path", path, expected);
      }
    }
  }

  private static void checkHeaders(Map<String, String> headers) {
    if (headers.size() > MAX_HEADERS) {
      throw RegistryException.invalid("health_check.headers", headers.size() + " headers", "at most " + MAX_HEADERS);
    }
    for (Map.Entry<String, String> e : headers.entrySet()) {
      String name = e.getKey();
      if (name.isEmpty() || name.length() > MAX_HEADER_NAME || !token(name)) {
        throw RegistryException.invalid("health_check.headers", name,
            "header names of 1.." + MAX_HEADER_NAME + " token characters (RFC 9110)");
      }
      if (RESERVED.contains(name.toLowerCase(Locale.ROOT))) {
        throw RegistryException.invalid("health_check.headers", name, "a header the probe does not set itself (not "
            + new java.util.TreeSet<>(RESERVED) + ")");
      }
      String value = e.getValue();
      if (value.length() > MAX_HEADER_VALUE) {
        throw RegistryException.invalid("health_check.headers[" + name + "]", value,
            "a value of at most " + MAX_HEADER_VALUE + " characters");
      }
      for (int i = 0; i < value.length(); i++) {
        char c = value.charAt(i);
        if ((c < ' ' && c != '\t') || c >= 0x7f) {
          throw RegistryException.invalid("health_check.headers[" + name + "]", value,
              "printable ASCII (no line breaks or control characters)");
        }
      }
    }
  }

  private static boolean token(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
      if (!ok) {
        return false;
      }
    }
    return true;
  }
}
