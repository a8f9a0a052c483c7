package io.roster.server.naming;

import io.roster.server.model.Names;
import io.roster.server.model.RegistryException;
import io.roster.server.push.Outbound;
import io.roster.server.session.Scope;
import io.roster.server.session.Session;
import io.roster.server.session.SessionInfo;
import io.roster.server.session.SessionManager;
import java.util.Map;

/**
 * A hello, whatever the transport: the client's id, name, version and labels checked, the
 * namespace defaulted and checked, and the session opened (in its connection's scope when
 * there is one).
 *
 * <p>Thread-safe: it holds no state of its own.
 */
public final class Hellos {

  /**
   * A hello as plain values.
   *
   * @param namespace empty means {@link Names#DEFAULT_NAMESPACE}
   * @param labels kept as the session's metadata
   * @param deltas whether the client takes delta pushes
   */
  public record Hello(String clientId, String namespace, String clientName, String clientVersion,
      Map<String, String> labels, boolean deltas, long sessionSeq) {

    /** A hello without a session_seq. */
    public Hello(String clientId, String namespace, String clientName, String clientVersion,
        Map<String, String> labels, boolean deltas) {
      this(clientId, namespace, clientName, clientVersion, labels, deltas, 0);
    }
  }

  private final SessionManager sessions;

  public Hellos(SessionManager sessions) {
    this.sessions = sessions;
  }

  /**
   * Checks {@code hello} and opens its session, writing through {@code outbound}.
   *
   * @param scope the connection's scope, or null when the transport has none (then no limits
   *     per connection or address apply)
   * @param remoteAddress the peer, as the session info and the logs show it
   * @return the opened session; its {@link Session#info()} carries the new connection id
   * @throws RegistryException INVALID_ARGUMENT for a bad field, RESOURCE_EXHAUSTED when the
   *     connection or its address has its fill of sessions
   */
  public Session open(Hello hello, Outbound outbound, Scope scope, String remoteAddress) {
    checkText("hello.client_id", hello.clientId(), 1, 128, "1..128 printable characters, stable across reconnects");
    String namespace = hello.namespace().isEmpty() ? Names.DEFAULT_NAMESPACE : hello.namespace();
    Names.checkSimpleName("hello.namespace", namespace, Names.MAX_NAMESPACE);
    checkText("hello.client_name", hello.clientName(), 0, 128, "at most 128 printable characters");
    checkText("hello.client_version", hello.clientVersion(), 0, 64, "at most 64 printable characters");
    Names.checkMetadata("hello.labels", hello.labels());
    SessionInfo info = new SessionInfo(sessions.nextConnectionId(), hello.clientId(), namespace,
        hello.clientName(), hello.clientVersion(), hello.labels(), remoteAddress, sessions.currentTimeMillis(),
        hello.sessionSeq());
    // Refused (RESOURCE_EXHAUSTED) when this connection or its address has its fill of sessions.
    return scope != null
        ? sessions.open(info, outbound, scope, hello.deltas())
        : sessions.open(info, outbound);
  }

  /** Length in [min, max] and no control characters (they would forge log lines). */
  static void checkText(String field, String value, int min, int max, String expected) {
    if (value.length() < min || value.length() > max) {
      throw RegistryException.invalid(field, value, expected);
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (LogText.isControl(c)) {
        throw RegistryException.invalid(field, LogText.of(value), expected);
      }
    }
  }
}
