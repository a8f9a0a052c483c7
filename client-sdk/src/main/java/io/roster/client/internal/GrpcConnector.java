package io.roster.client.internal;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ConnectivityState;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ListServicesRequest;
import io.roster.proto.v1.ListServicesResponse;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.QueryInstancesResponse;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.SessionGrpc;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The real transport: one grpc-netty-shaded channel per server address, plaintext or TLS (the
 * client's {@link TlsSettings}), created on first use and kept until {@link #shutdown}. Channels use HTTP/2 keepalive (gRPC raises the
 * time to at least 10 s) and keep pinging without calls.
 */
final class GrpcConnector implements Connector {

  private static final Logger log = LoggerFactory.getLogger(GrpcConnector.class);

  /**
   * The largest message this client accepts: 16 MiB, above anything a Roster server sends. A
   * server bounds each service's state by {@code --max-service-bytes} (default 3 MiB, at most
   * 15 MiB), so a full push or query answer always fits; gRPC's default of 4 MiB would turn a
   * server configured above it into a reconnect loop (docs/decisions.md, record 21).
   */
  static final int MAX_INBOUND_MESSAGE_BYTES = 16 * 1024 * 1024;

  private final Duration keepAliveTime;
  private final Duration keepAliveTimeout;
  private final String userAgent;
  private final @Nullable ChannelCredentials credentials;
  private final Bearer bearer;
  private final Map<ServerAddress, ManagedChannel> channels = new ConcurrentHashMap<>();
  private volatile boolean shutdown;

  /**
   * @param credentials TLS for every channel, or null for plaintext
   * @param token the credential for each call's {@code authorization} metadata; empty for none
   */
  GrpcConnector(Duration keepAliveTime, Duration keepAliveTimeout, String userAgent,
      @Nullable ChannelCredentials credentials, Supplier<String> token) {
    this.keepAliveTime = keepAliveTime;
    this.keepAliveTimeout = keepAliveTimeout;
    this.userAgent = userAgent;
    this.credentials = credentials;
    this.bearer = new Bearer(token);
  }

  /** Adds {@code authorization: Bearer TOKEN} to a call when there is a token. */
  private static final class Bearer implements ClientInterceptor {
    private static final Metadata.Key<String> AUTHORIZATION =
        Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private final Supplier<String> token;

    Bearer(Supplier<String> token) {
      this.token = token;
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
        @Override
        public void start(Listener<R> listener, Metadata headers) {
          String t = token.get();
          if (!t.isEmpty()) {
            headers.put(AUTHORIZATION, "Bearer " + t);
          }
          super.start(listener, headers);
        }
      };
    }
  }

  private NettyChannelBuilder builder(ServerAddress a) {
    return credentials == null ? NettyChannelBuilder.forAddress(a.host(), a.port()).usePlaintext()
        : NettyChannelBuilder.forAddress(a.host(), a.port(), credentials);
  }

  private ManagedChannel channel(ServerAddress address) {
    if (shutdown) {
      throw new IllegalStateException("connector is shut down");
    }
    return channels.computeIfAbsent(address, a -> builder(a)
        .maxInboundMessageSize(MAX_INBOUND_MESSAGE_BYTES)
        .keepAliveTime(keepAliveTime.toNanos(), TimeUnit.NANOSECONDS)
        .keepAliveTimeout(keepAliveTimeout.toNanos(), TimeUnit.NANOSECONDS)
        .keepAliveWithoutCalls(true)
        .userAgent(userAgent)
        .intercept(bearer)
        .directExecutor()
        .build());
  }

  @Override
  public SessionStream openSession(ServerAddress address, SessionStream.Listener listener) {
    ManagedChannel channel = channel(address);
    if (channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
      // The caller runs its own back-off; do not wait for the channel's.
      channel.resetConnectBackoff();
    }
    GrpcStream stream = new GrpcStream(listener);
    StreamObserver<ClientFrame> requests = SessionGrpc.newStub(channel).connect(stream);
    stream.requests = (ClientCallStreamObserver<ClientFrame>) requests;
    return stream;
  }

  @Override
  public CompletableFuture<QueryInstancesResponse> queryInstances(
      ServerAddress address, QueryInstancesRequest request, Duration timeout) {
    FutureObserver<QueryInstancesResponse> observer = new FutureObserver<>();
    RegistryGrpc.newStub(channel(address))
        .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
        .queryInstances(request, observer);
    return observer.future;
  }

  @Override
  public CompletableFuture<ListServicesResponse> listServices(
      ServerAddress address, ListServicesRequest request, Duration timeout) {
    FutureObserver<ListServicesResponse> observer = new FutureObserver<>();
    RegistryGrpc.newStub(channel(address))
        .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
        .listServices(request, observer);
    return observer.future;
  }

  @Override
  public void shutdown(Duration timeout) {
    shutdown = true;
    List<ManagedChannel> all = new ArrayList<>(channels.values());
    channels.clear();
    all.forEach(ManagedChannel::shutdown);
    Deadline deadline = Deadline.after(timeout);
    for (ManagedChannel c : all) {
      try {
        long left = deadline.remainingNanos();
        if (left <= 0 || !c.awaitTermination(left, TimeUnit.NANOSECONDS)) {
          c.shutdownNow();
        }
      } catch (InterruptedException e) {
        c.shutdownNow();
        Thread.currentThread().interrupt();
      }
    }
    log.debug("Closed {} channel(s)", all.size());
  }

  /** Adapts the gRPC call to {@link SessionStream}. */
  private static final class GrpcStream
      implements SessionStream, ClientResponseObserver<ClientFrame, ServerFrame> {

    private final SessionStream.Listener listener;
    @SuppressWarnings("NullAway.Init") // gRPC calls beforeStart before the call starts, so before openSession returns
    private volatile ClientCallStreamObserver<ClientFrame> requests;

    GrpcStream(SessionStream.Listener listener) {
      this.listener = listener;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<ClientFrame> requestStream) {
      this.requests = requestStream;
    }

    @Override
    public void send(ClientFrame frame) {
      try {
        requests.onNext(frame);
      } catch (RuntimeException e) {
        // The call is already over (cancelled or closed); its end reaches the listener.
        log.debug("Dropping a frame on a finished call: {}", e.toString());
      }
    }

    @Override
    public void halfClose() {
      try {
        requests.onCompleted();
      } catch (RuntimeException e) {
        log.debug("Half-close of a finished call: {}", e.toString());
      }
    }

    @Override
    public void cancel(String reason) {
      requests.cancel(reason, null);
    }

    @Override
    public void onNext(ServerFrame frame) {
      listener.onFrame(frame);
    }

    @Override
    public void onError(Throwable t) {
      listener.onClose(t);
    }

    @Override
    public void onCompleted() {
      listener.onClose(null);
    }
  }

  /** Completes a future with the single response of a unary call. */
  private static final class FutureObserver<T> implements StreamObserver<T> {
    final CompletableFuture<T> future = new CompletableFuture<>();

    @Override
    public void onNext(T value) {
      future.complete(value);
    }

    @Override
    public void onError(Throwable t) {
      future.completeExceptionally(t);
    }

    @Override
    public void onCompleted() {
      if (!future.isDone()) {
        future.completeExceptionally(new IllegalStateException("no response"));
      }
    }
  }
}
