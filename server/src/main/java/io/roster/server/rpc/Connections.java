package io.roster.server.rpc;

import io.grpc.Attributes;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerTransportFilter;
import io.roster.server.auth.ClientCertificates;
import io.roster.server.session.Scope;
import io.roster.server.session.SessionManager;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * Gives every client connection (HTTP/2 transport) its {@link Scope} when it opens and gives
 * it back when it closes, and puts the scope, the peer's address and the client certificate its
 * TLS handshake verified into each call's {@link Context}: limits then hold per connection and per
 * remote address, whatever number of streams a client opens on one connection.
 */
final class Connections extends ServerTransportFilter implements ServerInterceptor {

  private static final Attributes.Key<Scope> SCOPE_ATTR = Attributes.Key.create("roster-connection-scope");
  private static final Context.Key<String> REMOTE = Context.key("roster-remote-address");
  private static final Context.Key<Scope> SCOPE = Context.key("roster-connection-scope");
  private static final Context.Key<List<X509Certificate>> PEER_CERTIFICATES = Context.key("roster-peer-certificates");

  private final SessionManager sessions;

  Connections(SessionManager sessions) {
    this.sessions = sessions;
  }

  /** The current call's peer as {@code host:port}, or empty outside a call. */
  static String remoteAddress() {
    String s = REMOTE.get();
    return s == null ? "" : s;
  }

  /**
   * The client certificate chain the current call's connection verified in its TLS handshake, leaf
   * first; empty outside a call, on plaintext and without a client certificate.
   */
  static List<X509Certificate> peerCertificates() {
    List<X509Certificate> chain = PEER_CERTIFICATES.get();
    return chain == null ? List.of() : chain;
  }

  /** The current call's connection scope; null outside a call. */
  static Scope scope() {
    return SCOPE.get();
  }

  @Override
  public Attributes transportReady(Attributes attrs) {
    return attrs.toBuilder().set(SCOPE_ATTR, sessions.openConnection(host(attrs.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR)))).build();
  }

  @Override
  public void transportTerminated(Attributes attrs) {
    // gRPC passes null for a transport that ended before it was ready (a bare TCP probe).
    Scope scope = attrs == null ? null : attrs.get(SCOPE_ATTR);
    if (scope != null) {
      sessions.closeConnection(scope);
    }
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    SocketAddress addr = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    String remote = addr == null ? "" : addr.toString().replaceFirst("^[^/]*/", "");
    Scope scope = call.getAttributes().get(SCOPE_ATTR);
    if (scope == null) {
      // A transport that bypassed the filter (in-process): a scope of its own.
      scope = sessions.openConnection(host(addr));
      sessions.closeConnection(scope);
    }
    // Read only when they can prove an identity: with auth off nobody asks.
    List<X509Certificate> peer = sessions.authenticator().enabled()
        ? ClientCertificates.of(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION)) : List.of();
    Context context = Context.current().withValue(REMOTE, remote).withValue(SCOPE, scope)
        .withValue(PEER_CERTIFICATES, peer);
    return Contexts.interceptCall(context, call, headers, next);
  }

  /** The IP of a socket address without the port; the whole text for other kinds. */
  static String host(SocketAddress addr) {
    if (addr instanceof InetSocketAddress inet) {
      return inet.getAddress() != null ? inet.getAddress().getHostAddress() : inet.getHostString();
    }
    return addr == null ? "" : addr.toString();
  }
}
