package io.roster.it;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.protobuf.services.HealthStatusManager;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** A backend for the xDS tests: a plaintext gRPC server on a free port answering health checks, counting the calls. */
final class HealthBackend implements AutoCloseable {

  private final Server server;
  private final AtomicInteger calls = new AtomicInteger();

  private HealthBackend() throws IOException {
    ServerInterceptor counting = new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
          ServerCallHandler<Q, R> next) {
        calls.incrementAndGet();
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(next.startCall(call, headers)) {};
      }
    };
    server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
        .addService(ServerInterceptors.intercept(new HealthStatusManager().getHealthService(), counting)).build().start();
  }

  /** A started backend; the caller closes it. */
  static HealthBackend start() throws IOException {
    return new HealthBackend();
  }

  int port() {
    return server.getPort();
  }

  /** The calls served so far. */
  AtomicInteger calls() {
    return calls;
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }
}
