package io.roster.server.http;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A request refused with an HTTP status and a text body that says why, naming the parameter,
 * the value and what was expected. Thrown by handlers and by {@link HttpRequest}'s parameter
 * accessors; the endpoint turns it into the answer.
 */
public final class HttpException extends RuntimeException {

  private final int status;
  private final io.roster.server.model.@Nullable RegistryException refusal;

  public HttpException(int status, String message) {
    this(status, message, null);
  }

  /** The answer to a request the registry refused with {@code refusal} (counted by its limit in the metrics). */
  public HttpException(int status, String message, io.roster.server.model.@Nullable RegistryException refusal) {
    super(message, null, false, false);
    this.status = status;
    this.refusal = refusal;
  }

  /** The registry's refusal this answer reports, or null. */
  public io.roster.server.model.@Nullable RegistryException refusal() {
    return refusal;
  }

  /** The text body of the answer: never null, every refusal is given one. */
  @Override
  public String getMessage() {
    return Objects.requireNonNull(super.getMessage());
  }

  /** The HTTP status to answer with. */
  public int status() {
    return status;
  }

  /**
   * Throws 503 naming why while the server's registry may not be read (a cluster member that has
   * not joined the group, or is catching up with its log; decision 86): what every route that
   * reads or changes the registry asks first.
   */
  public static void refuseUnlessServing(io.roster.server.registry.Readiness readiness) {
    String why = readiness.refusal();
    if (why != null) {
      throw new HttpException(503, why + "; ask another server");
    }
  }

  /** 400: a parameter is missing or has a value that is not allowed. */
  public static HttpException badParameter(String name, @Nullable String value, String expected) {
    String shown = value == null ? "missing" : "\"" + (value.length() > 80 ? value.substring(0, 80) + "..." : value) + "\"";
    return new HttpException(400, name + ": " + shown + " (expected: " + expected + ")");
  }
}
