package io.roster.client;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The one exception the Roster client throws. It is unchecked and carries a {@link Code} that
 * says what went wrong, so callers decide by code and never by message text.
 *
 * <p>When a server rejects a request, {@link #code()} is the server's error code and
 * {@link #getMessage()} is the server's message, kept verbatim: it names the field, the bad
 * value and the limit, e.g. {@code weight: 20000.0 (expected: 0..10000)}. {@link #field()} is
 * the offending field path when the server named one ({@code instance.weight}), else empty.
 *
 * <p>Every call on a closed client throws the subtype {@link ClientClosedException}.
 *
 * <p>Instances are immutable and safe to share between threads.
 */
public class RosterException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** Why a call failed. Server error codes map one to one onto the codes of the same name. */
  public enum Code {
    /** A field is missing, malformed or out of range; the message names it. */
    INVALID_ARGUMENT,
    /** The named service or instance does not exist. */
    NOT_FOUND,
    /** A per-connection or server limit would be exceeded; the message names the limit. */
    RESOURCE_EXHAUSTED,
    /** The request is well-formed but not valid in the current state. */
    FAILED_PRECONDITION,
    /** Credentials are missing or wrong. */
    UNAUTHENTICATED,
    /** The credentials do not allow this operation. */
    PERMISSION_DENIED,
    /** No server could be reached (or every reachable one is shutting down). */
    UNAVAILABLE,
    /** A server was reached but did not answer within the request timeout. */
    TIMEOUT,
    /** {@code selectOneHealthyInstance} found no healthy, enabled instance with weight &gt; 0. */
    NO_INSTANCE_AVAILABLE,
    /** The client was closed; see {@link ClientClosedException}. */
    CLIENT_CLOSED,
    /** The server does not implement the request. */
    UNIMPLEMENTED,
    /** A bug on the server or in the client. */
    INTERNAL,
    /** A failure no other code describes. */
    UNKNOWN
  }

  private final Code code;
  private final String field;

  /**
   * Creates an exception.
   *
   * @param code why the call failed
   * @param message what a human needs to know to fix it
   */
  public RosterException(Code code, String message) {
    this(code, message, "", null);
  }

  /**
   * Creates an exception with the offending field and a cause.
   *
   * @param code why the call failed
   * @param message what a human needs to know to fix it
   * @param field the offending field path, or empty (null is read as empty)
   * @param cause the underlying failure, or null
   */
  public RosterException(Code code, String message, @Nullable String field, @Nullable Throwable cause) {
    super(message, cause);
    this.code = Objects.requireNonNull(code, "code");
    this.field = field == null ? "" : field;
  }

  /**
   * Returns why the call failed.
   *
   * @return the code, never null
   */
  public Code code() {
    return code;
  }

  /**
   * Returns the offending field path as the server named it (e.g. {@code instance.weight}).
   *
   * @return the field path, or an empty string when no single field is to blame
   */
  public String field() {
    return field;
  }

  @Override
  @SuppressWarnings("OverrideThrowableToString") // getMessage() stays the server's message verbatim; the code goes here
  public String toString() {
    return getClass().getName() + ": " + code + ": " + getMessage();
  }
}
