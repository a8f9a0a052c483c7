package io.roster.server.model;

import java.util.Objects;

/**
 * A request the registry refuses: bad input, a limit, or a missing thing. The message names
 * the field, the offending value and what was expected, so that it can be shown to a user
 * as is. Thrown before any state changes, so nothing registered is affected.
 */
public final class RegistryException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** Why the request was refused; the rpc layer maps each to one gRPC status / error code. */
  public enum Kind {
    INVALID_ARGUMENT,
    NOT_FOUND,
    RESOURCE_EXHAUSTED,
    FAILED_PRECONDITION,
    UNAVAILABLE,
    /** No credentials, or ones that prove no identity the server knows. */
    UNAUTHENTICATED,
    /** A known identity without the permission the request needs. */
    PERMISSION_DENIED
  }

  private final Kind kind;
  private final String field;
  /** For a refusal by a limit, the limit's flag without its dashes ({@code max-instances-per-connection}); else empty. */
  private final String limit;

  public RegistryException(Kind kind, String field, String message) {
    this(kind, field, message, "");
  }

  private RegistryException(Kind kind, String field, String message, String limit) {
    super(message, null, false, false);
    this.kind = kind;
    this.field = field == null ? "" : field;
    this.limit = limit;
  }

  /** {@code field: value (expected: ...)} for a bad argument. */
  public static RegistryException invalid(String field, Object value, String expected) {
    return new RegistryException(
        Kind.INVALID_ARGUMENT, field, field + ": " + quote(value) + " (expected: " + expected + ")");
  }

  /** A description of a value (e.g. "65 entries") shown without quotes in messages. */
  public static Object described(String text) {
    return new Described(text);
  }

  private record Described(String text) {
    @Override
    public String toString() {
      return text;
    }
  }

  /**
   * A per-connection or server limit, named by its flag without the dashes ({@code
   * max-instances-per-connection}); the message names the flag too.
   */
  public static RegistryException limit(String field, String limit, String message) {
    return new RegistryException(Kind.RESOURCE_EXHAUSTED, field, message, limit);
  }

  /** The flag of the limit that refused, without its dashes; empty when no limit refused. */
  public String limit() {
    return limit;
  }

  /** A credential that proves no identity: missing, unknown, expired or removed. */
  public static RegistryException unauthenticated(String field, String message) {
    return new RegistryException(Kind.UNAUTHENTICATED, field, message);
  }

  /** The text shown to the user: never null, every refusal is given one. */
  @Override
  public String getMessage() {
    return Objects.requireNonNull(super.getMessage());
  }

  public Kind kind() {
    return kind;
  }

  /** The offending field path, e.g. {@code instance.weight}; empty when none applies. */
  public String field() {
    return field;
  }

  private static String quote(Object value) {
    if (value instanceof String s) {
      String shown = s.length() > 80 ? s.substring(0, 80) + "...(" + s.length() + " chars)" : s;
      return "\"" + shown + "\"";
    }
    return String.valueOf(value);
  }
}
