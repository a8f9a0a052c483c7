/**
 * The Nacos 2.x gRPC adapter: the official {@code nacos-client} talks to Roster on Roster's own
 * gRPC port (docs/nacos-compat.md).
 *
 * <p>It serves {@code /Request/request} (unary) and {@code /BiRequestStream/requestBiStream}
 * (bidi) with Nacos's envelope ({@code Payload}: a type name and a JSON body) and only maps:
 * a Nacos connection (one HTTP/2 transport, {@link io.roster.server.nacos.NacosConnections})
 * is a {@link io.roster.server.session.Session} whose owner kind is {@code NACOS}, so its
 * registrations, subscriptions, pushes, acks, limits and cleanup are a Roster session's;
 * its stream's setup opens that session ({@code NacosStreams}) and Nacos requests become its
 * calls ({@code NacosService}); Nacos JSON shapes come
 * from and go to the {@code model} records ({@code NacosMapping}). There is no second registry.
 *
 * <p>What a Nacos connection has beyond a session: silent-client detection with {@code
 * ClientDetectionRequest} on the keepalive settings ({@code ClientDetection}), and {@code
 * ConnectResetRequest} wherever Roster sends its sessions {@code reconnect}, after which the
 * connection's end leaves its instances registered for the client's redo ({@code
 * NacosConnection.REDO_WAIT}).
 *
 * <p>Entry point: {@link io.roster.server.nacos.NacosEndpoint}, which the gRPC endpoint adds
 * beside {@code roster.v1.*} on one port.
 *
 * <p>The naming half of the Nacos v1 open API (HTTP) is {@link
 * io.roster.server.nacos.NacosHttpApi}, routed on the {@link io.roster.server.http.HttpEndpoint}
 * of {@code --http-port}; its instances are heartbeat instances ({@link
 * io.roster.server.naming.Leases}).
 *
 * <p>Auth (decision 66): with {@code --auth-file}, a naming request's {@code accessToken} header
 * proves who its connection is ({@code NacosService}), an HTTP request's {@code accessToken}
 * parameter or Bearer header who its caller is ({@code http.HttpCallers}); without a token, a client
 * certificate the auth file maps does (decision 80); {@code NacosLogin} answers
 * Nacos's logins from the auth file's users. The checks themselves are the {@code auth} package's.
 *
 * <p>Tracing: {@code NacosTrace}, the {@code roster.trace.nacos} logger, off by default; at DEBUG
 * it logs each step of each connection's requests and pushes with its time (decision 102).
 */
@NullMarked
package io.roster.server.nacos;

import org.jspecify.annotations.NullMarked;
