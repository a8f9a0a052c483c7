/**
 * The gRPC adapters: the only server package that speaks protobuf. {@link
 * io.roster.server.rpc.GrpcEndpoint} assembles Session, Registry, Admin, health and reflection;
 * ProtoMapper converts messages, Errors maps failures to statuses and error results.
 */
package io.roster.server.rpc;
