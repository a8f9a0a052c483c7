package io.roster.server.naming;

import io.roster.server.auth.Principal;
import io.roster.server.model.Names;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.push.Outbound;
import io.roster.server.session.Scope;
import io.roster.server.session.Session;
import io.roster.server.session.SessionInfo;
import io.roster.server.session.SessionManager;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A hello, whatever the transport: the client's id, name, version and labels checked, the
 * namespace defaulted and checked, and the session opened (in its connection's scope when
 * there is one). The Roster protocol's {@code hello} and the Nacos protocol's {@code
 * ConnectionSetupRequest} both come through here (decision 24), each naming the fields in its
 * errors as its own wire format does ({@link Fields}).
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

  /**
   * What a protocol calls the fields of its hello, for the errors that name them.
   *
   * @param clientId may be empty when the protocol has no such field: its value is the server's
   */
  public record Fields(String clientId, String namespace, String clientName, String clientVersion, String labels) {
    /** The Roster protocol's {@code hello} frame. */
    public static final Fields ROSTER =
        new Fields("hello.client_id", "hello.namespace", "hello.client_name", "hello.client_version", "hello.labels");
  }

  private final SessionManager sessions;

  public Hellos(SessionManager sessions) {
    this.sessions = sessions;
  }

  /**
   * Checks {@code token} and {@code hello} and opens its session as the identity the token
   * proves ({@link SessionManager#authenticator()}) or, without a token, the identity the auth
   * file maps the client certificate to (decision 80), writing through {@code outbound}.
   *
   * @param token {@code hello.token}: empty when the client sent none
   * @param peerCertificates the chain the connection's TLS handshake verified, leaf first; empty on
   *     plaintext or without a client certificate
   * @param scope the connection's scope, or null when the transport has none (then no limits
   *     per connection or address apply)
   * @param remoteAddress the peer, as the session info and the logs show it
   * @return the opened session; its {@link Session#info()} carries the new connection id
   * @throws RegistryException UNAUTHENTICATED when auth is on and neither the token nor the
   *     certificate proves an identity, INVALID_ARGUMENT for a bad field, RESOURCE_EXHAUSTED when the
   *     connection or its address has its fill of sessions
   */
  public Session open(Hello hello, String token, List<X509Certificate> peerCertificates, Outbound outbound,
      @Nullable Scope scope, String remoteAddress) {
    Principal principal = sessions.authenticator().authenticate(token, peerCertificates, remoteAddress, "hello.token");
    Hello checked = check(hello, Fields.ROSTER);
    SessionInfo info = info(checked, sessions.nextConnectionId(), remoteAddress);
    // Refused (RESOURCE_EXHAUSTED) when this connection or its address has its fill of sessions.
    Session s = scope != null
        ? sessions.open(info, outbound, scope, checked.deltas())
        : sessions.open(info, outbound);
    s.principal(principal);
    return s;
  }

  /**
   * A newer credential for an open session (the Roster protocol's {@code credentials} frame): it
   * must prove the same identity, whose current grants then apply.
   *
   * @throws RegistryException UNAUTHENTICATED when the token proves no identity, PERMISSION_DENIED
   *     when it proves another one (a session keeps the identity it said hello with)
   */
  public void renew(Session session, String token, String field) {
    Principal p = sessions.authenticator().authenticate(token, session.info().remoteAddress(), field);
    if (!p.name().equals(session.principal().name())) {
      throw new RegistryException(RegistryException.Kind.PERMISSION_DENIED, field, field + ": proves \""
          + p.name() + "\", but this session is \"" + session.principal().name()
          + "\" (a session keeps the identity of its hello; open a new one to change it)");
    }
    session.principal(p);
  }

  /**
   * Checks {@code hello}, naming its fields as {@code fields} does; returns it with the namespace
   * defaulted.
   *
   * @throws RegistryException INVALID_ARGUMENT naming the field, its value and what is expected
   */
  public Hello check(Hello hello, Fields fields) {
    checkText(fields.clientId(), hello.clientId(), 1, 128, "1..128 printable characters, stable across reconnects");
    String namespace = hello.namespace().isEmpty() ? Names.DEFAULT_NAMESPACE : hello.namespace();
    Names.checkSimpleName(fields.namespace(), namespace, Names.MAX_NAMESPACE);
    checkText(fields.clientName(), hello.clientName(), 0, 128, "at most 128 printable characters");
    checkText(fields.clientVersion(), hello.clientVersion(), 0, 64, "at most 64 printable characters");
    Names.checkMetadata(fields.labels(), hello.labels());
    return new Hello(hello.clientId(), namespace, hello.clientName(), hello.clientVersion(), hello.labels(),
        hello.deltas(), hello.sessionSeq());
  }

  /**
   * Opens the session of a hello {@link #check}ed before, as an owner of {@code kind}, on the
   * connection of {@code scope}, with {@code connectionId} (a transport that names its connections
   * itself, as Nacos's does).
   *
   * @throws RegistryException RESOURCE_EXHAUSTED when the connection or its address has its fill of sessions
   */
  public Session open(Hello checked, String connectionId, Owner.Kind kind, Outbound outbound, Scope scope,
      String remoteAddress) {
    return sessions.open(info(checked, connectionId, remoteAddress), outbound, scope, checked.deltas(), kind);
  }

  private SessionInfo info(Hello checked, String connectionId, String remoteAddress) {
    return new SessionInfo(connectionId, checked.clientId(), checked.namespace(), checked.clientName(),
        checked.clientVersion(), checked.labels(), remoteAddress, sessions.currentTimeMillis(), checked.sessionSeq());
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
