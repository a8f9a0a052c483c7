package io.roster.server.rpc;

import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.roster.server.session.RequestCounters;
import java.util.Locale;

/**
 * Counts the calls of Roster's unary and watching services ({@code Registry}, {@code Admin}) in
 * the server's request metrics as they end: type {@code Service/Method} (a fixed set, from the
 * protos), result the status, and its duration from its start to its end. {@code Session/Connect} counts each of its frames instead.
 */
final class CountedCalls implements ServerInterceptor {

  private final RequestCounters counters;

  CountedCalls(RequestCounters counters) {
    this.counters = counters;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    String method = call.getMethodDescriptor().getFullMethodName();
    String type = method.substring(method.lastIndexOf('.', method.indexOf('/')) + 1);
    long start = counters.start();
    return next.startCall(new SimpleForwardingServerCall<>(call) {
      @Override
      public void close(Status status, Metadata trailers) {
        counters.count(RequestCounters.Protocol.ROSTER, type,
            status.isOk() ? RequestCounters.OK : status.getCode().name().toLowerCase(Locale.ROOT), start);
        super.close(status, trailers);
      }
    }, headers);
  }
}
