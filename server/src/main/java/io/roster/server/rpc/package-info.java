/**
 * The gRPC adapters: the only server package that speaks protobuf. {@link
 * io.roster.server.rpc.GrpcEndpoint} assembles Session, Registry, Admin, health and reflection;
 * ProtoMapper converts messages, Errors maps failures to statuses and error results. The
 * protocol rules themselves are {@code naming}'s: the services here map and delegate.
 */
package io.roster.server.rpc;
