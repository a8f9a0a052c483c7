package io.roster.server.nacos;

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
import io.roster.server.session.Admission;
import io.roster.server.session.Session;
import io.roster.server.session.SessionManager;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Nacos connections: one per HTTP/2 transport. The connection id is assigned when the
 * transport is ready and put into the {@link Context} of every call on it (decision 35),
 * because Nacos's unary calls never name their connection: they find it through the
 * transport they share with the connection's stream. The transport's end ends the connection
 * (its session: instances and subscriptions removed, subscribers pushed).
 *
 * <p>It is also where the server turns clients away (a stopping server, a cluster member
 * catching up or cut off: {@code ServerCheckRequest} is answered with an error, so the client
 * tries its next server) and asks them to move ({@code ConnectResetRequest}, the Nacos
 * equivalent of Roster's {@code reconnect} frame).
 *
 * <p>Thread-safe.
 */
public final class NacosConnections extends ServerTransportFilter implements ServerInterceptor {

  private static final Attributes.Key<String> ID_ATTR = Attributes.Key.create("nacos-connection-id");
  private static final Context.Key<String> ID = Context.key("nacos-connection-id");
  private static final Context.Key<SocketAddress> REMOTE = Context.key("nacos-remote-address");
  private static final Context.Key<List<X509Certificate>> PEER_CERTIFICATES = Context.key("nacos-peer-certificates");

  private final SessionManager sessions;
  /** Registered connections (ConnectionSetupRequest seen), by id. */
  private final Map<String, NacosConnection> registered = new ConcurrentHashMap<>();
  private final AtomicLong resets = new AtomicLong();
  /** Whether new connections are welcome; the wait for the last one once stopping. */
  private final Admission admission = new Admission(registered::isEmpty);

  private final NacosTrace trace;

  NacosConnections(SessionManager sessions, NacosTrace trace) {
    this.sessions = sessions;
    this.trace = trace;
  }

  /** The current call's connection id; null outside a call or on a transport without one (in-process). */
  static String currentId() {
    return ID.get();
  }

  /** The current call's peer address; null outside a call. */
  static SocketAddress currentRemote() {
    return REMOTE.get();
  }

  /**
   * The client certificate chain the current call's transport verified in its TLS handshake, leaf
   * first; empty outside a call, on plaintext and without a client certificate.
   */
  static List<X509Certificate> currentPeerCertificates() {
    List<X509Certificate> chain = PEER_CERTIFICATES.get();
    return chain == null ? List.of() : chain;
  }

  @Override
  public Attributes transportReady(Attributes attrs) {
    String id = sessions.nextConnectionId();
    trace.step(id, "transport", "-");
    return attrs.toBuilder().set(ID_ATTR, id).build();
  }

  @Override
  public void transportTerminated(Attributes attrs) {
    // gRPC passes null for a transport that ended before it was ready (a bare TCP probe).
    String id = attrs == null ? null : attrs.get(ID_ATTR);
    if (id != null) {
      NacosConnection c = registered.remove(id);
      if (c != null) {
        c.close("transport closed");
      }
    }
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    String id = call.getAttributes().get(ID_ATTR);
    SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    // Read only when they can prove an identity: with auth off nobody asks.
    List<X509Certificate> peer = sessions.authenticator().enabled()
        ? ClientCertificates.of(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION)) : List.of();
    Context context = Context.current().withValue(ID, id).withValue(REMOTE, remote).withValue(PEER_CERTIFICATES, peer);
    return Contexts.interceptCall(context, call, headers, next);
  }

  /** The registered connection with this id, or null. */
  @Nullable NacosConnection get(@Nullable String id) {
    return id == null ? null : registered.get(id);
  }

  /** Registers {@code c}; false if its transport already has a registered connection. */
  boolean register(NacosConnection c) {
    return registered.putIfAbsent(c.id(), c) == null;
  }

  /** Forgets {@code c} (its stream ended). */
  void remove(NacosConnection c) {
    registered.remove(c.id(), c);
    admission.connectionEnded();
  }

  /** Why a new connection is refused now, or null when it is welcome. */
  @Nullable String refusal() {
    return admission.refusal();
  }

  /** Refuses new connections for now ({@code reason}), or accepts them again ({@code null}). */
  void refuse(@Nullable String reason) {
    admission.refuse(reason);
  }

  /** Refuses new connections from now on: the server is stopping. */
  void refuseNew(String reason) {
    admission.stop(reason);
  }

  /**
   * Sends a {@code ConnectResetRequest} to each registered connection whose session {@code
   * which} selects, naming the server {@code suggest} gives for it ({@code host:port} of a
   * Roster client port, or empty for the client's own next server). Returns how many were asked.
   */
  int move(Predicate<Session> which, Supplier<String> suggest) {
    int asked = 0;
    for (NacosConnection c : registered.values()) {
      Session s = c.session();
      if (s != null && which.test(s) && c.move("", suggest.get())) {
        asked++;
      }
    }
    return asked;
  }

  /** A new {@code ConnectResetRequest}'s request id. */
  String nextResetId() {
    return "reset-" + resets.incrementAndGet();
  }

  /** The server is stopping: new connections are refused and every connection is asked to move. */
  void moveAll(String reason, Supplier<String> suggest) {
    refuseNew(reason);
    move(s -> true, suggest);
    admission.connectionEnded();
  }

  /** Waits until every connection has ended after {@link #moveAll}, or {@code timeout}. */
  boolean awaitAllEnded(Duration timeout) throws InterruptedException {
    return admission.awaitAllEnded(timeout);
  }

  /**
   * A Roster client address {@code host:port} as a {@code ConnectResetRequest}'s {@code
   * serverIp} and {@code serverPort}: the Nacos client adds 1000 to the port it is given (its
   * HTTP port), so the port is {@code port - 1000}. Empty: both empty.
   */
  static String[] nacosServer(String address) {
    int colon = address.lastIndexOf(':');
    if (address.isEmpty() || colon <= 0) {
      return new String[] {address, ""};
    }
    String host = address.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    String port = address.substring(colon + 1);
    try {
      int p = Integer.parseInt(port);
      return new String[] {host, Integer.toString(p > 1000 ? p - 1000 : p)};
    } catch (NumberFormatException e) {
      return new String[] {host, ""};
    }
  }

  /** How many Nacos connections are registered. */
  public int count() {
    return registered.size();
  }

  /** The IP of a socket address without the port; the whole text for other kinds. */
  static String host(SocketAddress addr) {
    if (addr instanceof InetSocketAddress inet) {
      return inet.getAddress() != null ? inet.getAddress().getHostAddress() : inet.getHostString();
    }
    return addr == null ? "" : addr.toString();
  }
}
