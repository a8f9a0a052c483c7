package io.roster.client.internal;

import io.roster.client.DrainResult;
import io.roster.client.RosterException;
import io.roster.client.RosterException.Code;
import org.jspecify.annotations.Nullable;

/**
 * The server's answer to one {@link Request} on a session, in the client's terms (mapped by
 * {@link ProtoMapper#answer}). Immutable.
 *
 * @param ok the request was applied
 * @param code why it failed; null when ok
 * @param wireCode the server's name of the code, as it sent it (for messages and logs)
 * @param message the server's reason, verbatim
 * @param field the offending field, or empty
 * @param query the answer to a {@link Request.Query}, or null
 * @param drain the counts of a {@link Request.Drain} (zero for other requests)
 */
record Answer(boolean ok, @Nullable Code code, String wireCode, String message, String field, @Nullable QueryAnswer query,
    DrainResult drain) {

  /** The server cannot take this now (a member cut off or catching up, a stopping server): go elsewhere. */
  boolean unavailable() {
    return code == Code.UNAVAILABLE;
  }

  /** The exception for an error answer; the server's message is kept verbatim. */
  RosterException toException() {
    String text = message.isEmpty() ? "the server rejected the request with " + wireCode : message;
    return new RosterException(code == null ? Code.UNKNOWN : code, text, field, null);
  }
}
