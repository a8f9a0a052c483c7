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
import io.roster.server.session.SessionManager;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Nacos connections: one per HTTP/2 transport. The connection id is assigned when the
 * transport is ready and put into the {@link Context} of every call on it (nacos-reference.md
 * §1.4), because Nacos's unary calls never name their connection: they find it through the
 * transport they share with the connection's stream. The transport's end ends the connection
 * (its session: instances and subscriptions removed, subscribers pushed).
 *
 * <p>Thread-safe.
 */
public final class NacosConnections extends ServerTransportFilter implements ServerInterceptor {

  private static final Attributes.Key<String> ID_ATTR = Attributes.Key.create("nacos-connection-id");
  private static final Context.Key<String> ID = Context.key("nacos-connection-id");
  private static final Context.Key<SocketAddress> REMOTE = Context.key("nacos-remote-address");

  private final SessionManager sessions;
  /** Registered connections (ConnectionSetupRequest seen), by id. */
  private final Map<String, NacosConnection> registered = new ConcurrentHashMap<>();

  NacosConnections(SessionManager sessions) {
    this.sessions = sessions;
  }

  /** The current call's connection id; null outside a call or on a transport without one (in-process). */
  static String currentId() {
    return ID.get();
  }

  /** The current call's peer address; null outside a call. */
  static SocketAddress currentRemote() {
    return REMOTE.get();
  }

  @Override
  public Attributes transportReady(Attributes attrs) {
    return attrs.toBuilder().set(ID_ATTR, sessions.nextConnectionId()).build();
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
    Context context = Context.current().withValue(ID, id).withValue(REMOTE, remote);
    return Contexts.interceptCall(context, call, headers, next);
  }

  /** The registered connection with this id, or null. */
  NacosConnection get(String id) {
    return id == null ? null : registered.get(id);
  }

  /** Registers {@code c}; false if its transport already has a registered connection. */
  boolean register(NacosConnection c) {
    return registered.putIfAbsent(c.id(), c) == null;
  }

  /** Forgets {@code c} (its stream ended). */
  void remove(NacosConnection c) {
    registered.remove(c.id(), c);
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
