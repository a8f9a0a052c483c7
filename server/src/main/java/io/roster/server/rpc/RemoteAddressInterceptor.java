package io.roster.server.rpc;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.net.SocketAddress;

/** Puts the peer's address into the call's {@link Context}, for session info and logs. */
final class RemoteAddressInterceptor implements ServerInterceptor {

  private static final Context.Key<String> REMOTE = Context.key("roster-remote-address");

  /** The current call's peer as {@code host:port}, or empty outside a call. */
  static String current() {
    String s = REMOTE.get();
    return s == null ? "" : s;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    SocketAddress addr = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    String remote = addr == null ? "" : addr.toString().replaceFirst("^[^/]*/", "");
    return Contexts.interceptCall(Context.current().withValue(REMOTE, remote), call, headers, next);
  }
}
