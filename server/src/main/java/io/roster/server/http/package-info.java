/**
 * A small HTTP/1.1 listener for the adapters that speak HTTP (today the Nacos v1 open API):
 * {@link io.roster.server.http.HttpEndpoint} binds Jetty's core server with bounded threads and
 * connections, a cap on request bodies and a deadline on a request's arrival ({@link
 * io.roster.server.http.SlowRequests}), decodes query strings and form bodies into {@link
 * io.roster.server.http.HttpRequest}, and routes by path prefix. It knows nothing of the
 * registry; handlers map and delegate (docs/decisions.md, records 38 and 67). Every answer carries
 * the security headers, and HTTPS takes only AEAD suites (record 82).
 */
@NullMarked
package io.roster.server.http;

import org.jspecify.annotations.NullMarked;
