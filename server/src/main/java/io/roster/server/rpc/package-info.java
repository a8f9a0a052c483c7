/**
 * The gRPC adapters of {@code roster.v1}: with {@code cluster} (the log's entries) and {@code
 * nacos} (Nacos's envelope), one of the server packages that speak protobuf. {@link
 * io.roster.server.rpc.GrpcEndpoint} assembles Session, Registry, Admin, health and reflection;
 * ProtoMapper converts messages, Errors maps failures to statuses and error results. The
 * protocol rules themselves are {@code naming}'s: the services here map and delegate. Nothing
 * under a stream's write lock calls back into a push queue or a session.
 *
 * <p><b>Lock order</b> (docs/decisions.md, record 91): where the server holds more than one
 * monitor it takes them in this order, never the other way: a session ({@code session.Session}),
 * a service of the registry ({@code registry.ServiceEntry}), a service's push coalescing ({@code
 * push.PushEngine}), a session's push queue ({@code push.PushQueue}), the transport's write lock
 * ({@code rpc}'s stream, a Nacos connection). {@code LockOrderTest} checks it.
 */
@NullMarked
package io.roster.server.rpc;

import org.jspecify.annotations.NullMarked;
