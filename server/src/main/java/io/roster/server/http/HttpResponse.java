package io.roster.server.http;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What a handler answers: a status, a content type, a body (UTF-8) and any other headers.
 * Immutable.
 *
 * @param status the HTTP status code
 * @param contentType the {@code Content-Type} header, charset included
 * @param body the body text; empty for none
 * @param headers other headers to send (say {@code Retry-After}), by name
 */
public record HttpResponse(int status, String contentType, String body, Map<String, String> headers) {

  static final String TEXT = "text/plain;charset=UTF-8";
  static final String JSON = "application/json;charset=UTF-8";

  public HttpResponse {
    Objects.requireNonNull(contentType, "contentType");
    Objects.requireNonNull(body, "body");
    headers = Map.copyOf(headers);
  }

  /** An answer without other headers. */
  public HttpResponse(int status, String contentType, String body) {
    this(status, contentType, body, Map.of());
  }

  /** The same answer with the header {@code name} set to {@code value}. */
  public HttpResponse withHeader(String name, String value) {
    Map<String, String> more = new LinkedHashMap<>(headers);
    more.put(name, value);
    return new HttpResponse(status, contentType, body, more);
  }

  /** A plain-text answer. */
  public static HttpResponse text(int status, String body) {
    return new HttpResponse(status, TEXT, body);
  }

  /** A JSON body (already encoded) with {@code status}. */
  public static HttpResponse json(int status, String body) {
    return new HttpResponse(status, JSON, body);
  }

  /** A 200 with a JSON body (already encoded). */
  public static HttpResponse json(String body) {
    return new HttpResponse(200, JSON, body);
  }

  /**
   * The file {@code name} under {@code classpathDir} in the server's jar, as a 200 answer of its type.
   *
   * @throws IllegalArgumentException when it is not on the class path
   */
  static HttpResponse classpathFile(String classpathDir, String name) {
    String resource = classpathDir + "/" + name;
    try (java.io.InputStream in = HttpResponse.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalArgumentException(resource + ": not on the class path");
      }
      String body = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      return new HttpResponse(200, org.eclipse.jetty.http.MimeTypes.DEFAULTS.getMimeByExtension(name)
          + ";charset=UTF-8", body);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(resource + ": not readable", e);
    }
  }
}
