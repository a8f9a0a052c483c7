/**
 * The gRPC adapters of {@code roster.v1}: with {@code cluster} (the log's entries) and {@code
 * nacos} (Nacos's envelope), one of the server packages that speak protobuf. {@link
 * io.roster.server.rpc.GrpcEndpoint} assembles Session, Registry, Admin, health and reflection;
 * ProtoMapper converts messages, Errors maps failures to statuses and error results. The
 * protocol rules themselves are {@code naming}'s: the services here map and delegate.
 */
@NullMarked
package io.roster.server.rpc;

import org.jspecify.annotations.NullMarked;
