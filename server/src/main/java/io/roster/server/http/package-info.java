/**
 * A small HTTP/1.1 listener for the adapters that speak HTTP (today the Nacos v1 open API):
 * {@link io.roster.server.http.HttpEndpoint} binds the JDK's built-in server with a bounded
 * executor and a cap on request bodies, parses query strings and form bodies into
 * {@link io.roster.server.http.HttpRequest}, and routes by path prefix. It knows nothing of
 * the registry; handlers map and delegate (docs/decisions.md, record 38).
 */
@NullMarked
package io.roster.server.http;

import org.jspecify.annotations.NullMarked;
