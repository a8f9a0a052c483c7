package io.roster.server.rpc;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.roster.server.auth.Authenticator;
import io.roster.server.auth.ClientCertificates;
import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.session.SessionManager;
import java.net.SocketAddress;

/**
 * Who a {@code Registry}, {@code Admin} or xDS call is: its {@code authorization: Bearer TOKEN}
 * metadata or, without one, the client certificate its connection's TLS handshake verified
 * (decision 80), checked by the {@link Authenticator} before the call starts (UNAUTHENTICATED, and
 * the call never reaches the service, when it proves no identity). The {@link Principal} rides in
 * the call's {@link Context}; each method checks the permission it needs with {@link #check}.
 * {@code Session/Connect} carries its credential in its hello, and health, reflection and the
 * Nacos protocol are not asked here (docs/security.md). Thread-safe.
 */
final class Callers implements ServerInterceptor {

  /** The call metadata that carries the caller's token: {@code authorization: Bearer TOKEN}. */
  static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private static final Context.Key<Principal> PRINCIPAL = Context.key("roster-principal");
  private static final String REGISTRY = io.roster.proto.v1.RegistryGrpc.SERVICE_NAME;
  private static final String ADMIN = io.roster.proto.v1.AdminGrpc.SERVICE_NAME;
  private static final String XDS =
      io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc.SERVICE_NAME;

  private final SessionManager sessions;

  Callers(SessionManager sessions) {
    this.sessions = sessions;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    String service = call.getMethodDescriptor().getServiceName();
    Authenticator authenticator = sessions.authenticator();
    if (!(REGISTRY.equals(service) || ADMIN.equals(service) || XDS.equals(service))) {
      return next.startCall(call, headers);
    }
    SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    String remoteAddress = remote == null ? "" : remote.toString();
    Principal p;
    if (!authenticator.enabled()) {
      if (!AUDITED.contains(call.getMethodDescriptor().getBareMethodName()) && !ADMIN.equals(service)) {
        return next.startCall(call, headers); // queries and watches: nobody to tell apart, nothing to audit
      }
      p = Principal.ANONYMOUS.from(Principal.hostOf(remoteAddress));
    } else {
      try {
        p = authenticator.authenticate(Authenticator.bearer(headers.get(AUTHORIZATION)),
            ClientCertificates.of(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION)), remoteAddress,
            "authorization");
      } catch (RegistryException e) {
        call.close(Errors.status(e), new Metadata());
        return new ServerCall.Listener<>() {};
      }
    }
    return Contexts.interceptCall(Context.current().withValue(PRINCIPAL, p), call, headers, next);
  }

  /** The Registry calls that change something, which the audit trail may name the caller of. */
  private static final java.util.Set<String> AUDITED =
      java.util.Set.of("UpdateInstance", "UpdateService", "RegisterInstance", "DeregisterInstance");

  /** The current call's identity ({@link Principal#ANONYMOUS} with auth off). */
  static Principal caller() {
    Principal p = PRINCIPAL.get();
    return p == null ? Principal.ANONYMOUS : p;
  }

  /**
   * Refuses unless the current call may do {@code needed} on {@code service}.
   *
   * @throws RegistryException PERMISSION_DENIED naming the identity, the permission and the service
   */
  static void check(Permission needed, ServiceKey service) {
    caller().check(needed, service.namespace(), service.group(), service.name());
  }
}
