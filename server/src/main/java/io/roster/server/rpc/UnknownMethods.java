package io.roster.server.rpc;

import io.grpc.HandlerRegistry;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.Status;
import io.roster.server.session.RequestCounters;
import java.io.InputStream;
import org.jspecify.annotations.Nullable;

/**
 * The client port's answer to a method it does not serve: UNIMPLEMENTED, as gRPC's own, and
 * counted in the server's request metrics as protocol {@code roster}, type {@value #TYPE}, result
 * {@code unimplemented}, whatever the method's name, so that no name a client makes up becomes a
 * label. Stateless apart from the counters; thread-safe.
 */
final class UnknownMethods extends HandlerRegistry {

  /** The type every unknown method is counted under. */
  static final String TYPE = "unknown";

  private final RequestCounters counters;

  UnknownMethods(RequestCounters counters) {
    this.counters = counters;
  }

  @Override
  public @Nullable ServerMethodDefinition<?, ?> lookupMethod(String methodName, @Nullable String authority) {
    MethodDescriptor<InputStream, InputStream> method = MethodDescriptor.<InputStream, InputStream>newBuilder()
        .setType(MethodDescriptor.MethodType.UNKNOWN).setFullMethodName(methodName)
        .setRequestMarshaller(Raw.INSTANCE).setResponseMarshaller(Raw.INSTANCE).build();
    return ServerMethodDefinition.create(method, this::refuse);
  }

  private ServerCall.Listener<InputStream> refuse(ServerCall<InputStream, InputStream> call, Metadata headers) {
    counters.count(RequestCounters.Protocol.ROSTER, TYPE, "unimplemented");
    call.close(Status.UNIMPLEMENTED.withDescription("Method not found: " + call.getMethodDescriptor()
        .getFullMethodName()), new Metadata());
    return new ServerCall.Listener<>() {};
  }

  /** A message's bytes, unread: no message of an unknown method is ever parsed. */
  private enum Raw implements MethodDescriptor.Marshaller<InputStream> {
    INSTANCE;

    @Override
    public InputStream stream(InputStream value) {
      return value;
    }

    @Override
    public InputStream parse(InputStream stream) {
      return stream;
    }
  }
}
