package io.roster.server.http;

import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.UrlEncoded;
import org.jspecify.annotations.Nullable;

/**
 * One request as handlers see it: method, path, and its parameters from the query string and
 * an {@code application/x-www-form-urlencoded} body together (the query string's value wins
 * when a name is in both, as a servlet's {@code getParameter} answers). Immutable.
 */
public final class HttpRequest {

  /** Parameters per request at most; more is refused (400) before any handler runs. */
  static final int MAX_PARAMETERS = 64;

  private final String method;
  private final String path;
  private final Map<String, String> params;
  private final String remoteHost;
  private final @Nullable String authorization;
  private final @Nullable String accept;
  private final List<X509Certificate> peerCertificates;

  HttpRequest(String method, String path, Map<String, String> params, String remoteHost,
      @Nullable String authorization, @Nullable String accept, List<X509Certificate> peerCertificates) {
    this.method = method;
    this.path = path;
    this.params = Collections.unmodifiableMap(params);
    this.remoteHost = remoteHost;
    this.authorization = authorization;
    this.accept = accept;
    this.peerCertificates = List.copyOf(peerCertificates);
  }

  /** The Jetty request as handlers see it: parameters from the query string, then from a form body. */
  static HttpRequest of(Request request, String body) {
    Map<String, String> params = new LinkedHashMap<>();
    parseForm(request.getHttpURI().getQuery(), params);
    String type = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
    if (!body.isEmpty()
        && (type == null || type.toLowerCase(Locale.ROOT).startsWith("application/x-www-form-urlencoded"))) {
      parseForm(body.strip(), params);
    }
    return new HttpRequest(request.getMethod().toUpperCase(Locale.ROOT), request.getHttpURI().getDecodedPath(), params,
        Request.getRemoteAddr(request), request.getHeaders().get(HttpHeader.AUTHORIZATION),
        request.getHeaders().get(HttpHeader.ACCEPT), peerCertificates(request));
  }

  /** The client certificate chain the request's TLS connection verified, leaf first; empty on plaintext or without one. */
  private static List<X509Certificate> peerCertificates(Request request) {
    EndPoint.SslSessionData tls = request.getConnectionMetaData().getConnection().getEndPoint().getSslSessionData();
    X509Certificate[] chain = tls == null ? null : tls.peerCertificates();
    return chain == null ? List.of() : List.of(chain);
  }

  /** A request built by hand (tests and adapters that re-dispatch), without an {@code Authorization} header. */
  public static HttpRequest of(String method, String path, Map<String, String> params, String remoteHost) {
    return new HttpRequest(method, path, new LinkedHashMap<>(params), remoteHost, null, null, List.of());
  }

  /** The {@code Accept} header, or null. */
  public @Nullable String accept() {
    return accept;
  }

  /** {@code GET}, {@code POST}, ... in upper case. */
  public String method() {
    return method;
  }

  /** The path, decoded, without the query string. */
  public String path() {
    return path;
  }

  /** The caller's IP address (no port). */
  public String remoteHost() {
    return remoteHost;
  }

  /**
   * The client certificate chain the connection's TLS handshake verified, leaf first; empty on
   * plaintext and without a client certificate.
   */
  public List<X509Certificate> peerCertificates() {
    return peerCertificates;
  }

  /** The {@code Authorization} header as sent (say {@code Bearer TOKEN}), or null when there is none. */
  public @Nullable String authorization() {
    return authorization;
  }

  /** Every parameter (first value of each name). */
  public Map<String, String> params() {
    return params;
  }

  /** A parameter, or null when it is absent. */
  public @Nullable String param(String name) {
    return params.get(name);
  }

  /** A parameter, or {@code fallback} when it is absent or empty. */
  public String param(String name, String fallback) {
    String v = params.get(name);
    return v == null || v.isEmpty() ? fallback : v;
  }

  /** A parameter that must be there and not be empty; else 400 naming it. */
  public String required(String name) {
    String v = params.get(name);
    if (v == null || v.isEmpty()) {
      throw HttpException.badParameter(name, null, "a value");
    }
    return v;
  }

  /** An integer parameter within {@code min..max}, or {@code fallback} when absent. */
  public int intParam(String name, int fallback, int min, int max) {
    String v = params.get(name);
    if (v == null || v.isEmpty()) {
      return fallback;
    }
    try {
      int n = Integer.parseInt(v.trim());
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw HttpException.badParameter(name, v, "an integer " + min + ".." + max);
  }

  /** A {@code true}/{@code false} parameter, or null when absent. */
  public @Nullable Boolean boolParam(String name) {
    String v = params.get(name);
    if (v == null || v.isEmpty()) {
      return null;
    }
    return switch (v.trim().toLowerCase(java.util.Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw HttpException.badParameter(name, v, "true or false");
    };
  }

  /** A decimal parameter, or null when absent. */
  public @Nullable Double doubleParam(String name) {
    String v = params.get(name);
    if (v == null || v.isEmpty()) {
      return null;
    }
    try {
      return Double.parseDouble(v.trim());
    } catch (NumberFormatException e) {
      throw HttpException.badParameter(name, v, "a number");
    }
  }

  /**
   * Adds the pairs of {@code form} ({@code a=1&b=2}, URL-encoded, decoded by Jetty's {@code
   * UrlEncoded}) to {@code into}, keeping values already there; refuses more than {@link
   * #MAX_PARAMETERS} names in all.
   */
  static void parseForm(@Nullable String form, Map<String, String> into) {
    if (form == null || form.isEmpty()) {
      return;
    }
    try {
      UrlEncoded.decodeTo(form, (name, value) -> {
        into.putIfAbsent(name, value == null ? "" : value);
        if (into.size() > MAX_PARAMETERS) {
          throw new HttpException(400, "too many parameters (limit: " + MAX_PARAMETERS + ")");
        }
      }, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw new HttpException(400, "not URL-encoded: \"" + (form.length() > 64 ? form.substring(0, 64) + "..." : form)
          + "\" (expected: %XX escapes)");
    }
  }
}
