package io.roster.server.http;

import java.util.Objects;

/**
 * What a handler answers: a status, a content type and a body (UTF-8). Immutable.
 *
 * @param status the HTTP status code
 * @param contentType the {@code Content-Type} header, charset included
 * @param body the body text; empty for none
 */
public record HttpResponse(int status, String contentType, String body) {

  static final String TEXT = "text/plain;charset=UTF-8";
  static final String JSON = "application/json;charset=UTF-8";

  public HttpResponse {
    Objects.requireNonNull(contentType, "contentType");
    Objects.requireNonNull(body, "body");
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
}
