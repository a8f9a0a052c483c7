package io.roster.client;

import java.net.InetAddress;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ErrorCode;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.QueryInstancesResponse;
import io.roster.proto.v1.Reconnect;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.SessionGrpc;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import io.roster.server.testing.TestTime;

/**
 * A gRPC-level relay in front of a real server, on its own loopback port, with scripted faults:
 * it forwards {@code Session/Connect} frame by frame and {@code Registry/QueryInstances} call by
 * call, and on demand drops pushes on their way to the client, answers {@code query} frames or
 * QueryInstances calls with UNAVAILABLE (as a stopping server does), or follows its first
 * {@code welcome} with a {@code reconnect} that suggests another server. It counts what it saw.
 */
final class GrpcRelay implements AutoCloseable {

  /** Pushes from the server are dropped, not forwarded (the client never sees or acks them). */
  volatile boolean dropPushes;
  /** {@code query} frames are answered ERROR_CODE_UNAVAILABLE by the relay itself. */
  volatile boolean queryFramesUnavailable;
  /** QueryInstances calls fail with UNAVAILABLE. */
  volatile boolean queriesUnavailable;
  /** When set, the next welcome is followed by a reconnect suggesting this server. */
  final AtomicReference<String> reconnectTo = new AtomicReference<>();

  final AtomicInteger sessions = new AtomicInteger();
  final AtomicInteger droppedPushes = new AtomicInteger();
  final AtomicInteger queryFrames = new AtomicInteger();
  final AtomicInteger queryCalls = new AtomicInteger();

  private final ManagedChannel upstream;
  private final Server server;
  private final java.util.List<Runnable> cutters = new java.util.concurrent.CopyOnWriteArrayList<>();

  GrpcRelay(int upstreamPort) throws IOException {
    upstream = NettyChannelBuilder.forAddress("127.0.0.1", upstreamPort).usePlaintext().build();
    server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
        .addService(new SessionRelay())
        .addService(new RegistryRelay())
        .build()
        .start();
  }

  String address() {
    return "127.0.0.1:" + server.getPort();
  }

  /**
   * Cuts every relayed session as a broken connection would: the client's stream fails with
   * UNAVAILABLE and the server's is cancelled (the server ends that session).
   */
  void cutSessions() {
    for (Runnable cut : cutters) {
      cut.run();
    }
    cutters.clear();
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow();
    upstream.shutdownNow();
    server.awaitTermination(5, TimeUnit.SECONDS);
    upstream.awaitTermination(5, TimeUnit.SECONDS);
  }

  private final class SessionRelay extends SessionGrpc.SessionImplBase {
    @Override
    public StreamObserver<ClientFrame> connect(StreamObserver<ServerFrame> toClient) {
      sessions.incrementAndGet();
      Object writes = new Object(); // a StreamObserver is not thread-safe
      StreamObserver<ClientFrame> toServer = SessionGrpc.newStub(upstream).connect(new StreamObserver<>() {
        @Override
        public void onNext(ServerFrame f) {
          if (f.hasPush() && dropPushes) {
            droppedPushes.incrementAndGet();
            return;
          }
          synchronized (writes) {
            toClient.onNext(f);
            String suggested = f.hasWelcome() ? reconnectTo.getAndSet(null) : null;
            if (suggested != null) {
              toClient.onNext(ServerFrame.newBuilder().setReconnect(Reconnect.newBuilder()
                  .setReason("relay moves you").setSuggestedServer(suggested)).build());
            }
          }
        }

        @Override
        public void onError(Throwable t) {
          synchronized (writes) {
            try {
              toClient.onError(t);
            } catch (RuntimeException alreadyOver) {
              // Cut by the relay before the server's end came back.
            }
          }
        }

        @Override
        public void onCompleted() {
          synchronized (writes) {
            try {
              toClient.onCompleted();
            } catch (RuntimeException alreadyOver) {
              // Cut by the relay before the server's end came back.
            }
          }
        }
      });
      cutters.add(() -> {
        synchronized (writes) {
          try {
            toClient.onError(Status.UNAVAILABLE.withDescription("relay cut the connection").asRuntimeException());
          } catch (RuntimeException alreadyOver) {
            // The call ended meanwhile.
          }
        }
        try {
          toServer.onError(Status.CANCELLED.withDescription("relay cut the connection").asRuntimeException());
        } catch (RuntimeException alreadyOver) {
          // The call ended meanwhile.
        }
      });
      return new StreamObserver<>() {
        @Override
        public void onNext(ClientFrame f) {
          if (f.hasQuery() && queryFramesUnavailable) {
            queryFrames.incrementAndGet();
            synchronized (writes) {
              toClient.onNext(ServerFrame.newBuilder().setRequestId(f.getRequestId())
                  .setResult(Result.newBuilder().setCode(ErrorCode.ERROR_CODE_UNAVAILABLE)
                      .setMessage("relay: server shutting down; ask another server")).build());
            }
            return;
          }
          if (f.hasQuery()) {
            queryFrames.incrementAndGet();
          }
          toServer.onNext(f);
        }

        @Override
        public void onError(Throwable t) {
          toServer.onError(t);
        }

        @Override
        public void onCompleted() {
          toServer.onCompleted();
        }
      };
    }
  }

  private final class RegistryRelay extends RegistryGrpc.RegistryImplBase {
    @Override
    public void queryInstances(QueryInstancesRequest req, StreamObserver<QueryInstancesResponse> out) {
      queryCalls.incrementAndGet();
      if (queriesUnavailable) {
        out.onError(Status.UNAVAILABLE.withDescription("relay: server shutting down; ask another server")
            .asRuntimeException());
        return;
      }
      try {
        out.onNext(RegistryGrpc.newBlockingStub(upstream).withDeadlineAfter(TestTime.seconds(10).toMillis(), TimeUnit.MILLISECONDS)
            .queryInstances(req));
        out.onCompleted();
      } catch (StatusRuntimeException e) {
        out.onError(e);
      }
    }
  }
}
