/**
 * A small HTTP/1.1 listener for the adapters that speak HTTP (today the Nacos v1 open API):
 * {@link io.roster.server.http.HttpEndpoint} binds Jetty's core server with bounded threads and
 * connections, a cap on request bodies and a deadline on a request's arrival ({@link
 * io.roster.server.http.SlowRequests}), decodes query strings and form bodies into {@link
 * io.roster.server.http.HttpRequest}, and routes by path prefix. It knows nothing of the
 * registry; handlers map and delegate (docs/decisions.md, records 38 and 67). Every answer carries
 * the security headers, and HTTPS takes only AEAD suites (record 82).
 *
 * <p>What the HTTP adapters ({@code nacos}, {@code admin}, {@code metrics}) share is here too, so
 * that none of them uses another (decision 90): how a request names a service and an instance
 * ({@code NamingParams}), the admin APIs' JSON envelope ({@code JsonEnvelope}) and their JSON of
 * one connection ({@code ConnectionJson}), and who a caller is ({@code HttpCallers}). May depend
 * on {@code session}, {@code registry}, {@code auth}, {@code tls}, {@code model} and {@code time},
 * never on an adapter.
 */
@NullMarked
package io.roster.server.http;

import org.jspecify.annotations.NullMarked;
