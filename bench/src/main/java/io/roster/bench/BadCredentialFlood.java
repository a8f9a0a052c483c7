package io.roster.bench;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.SessionGrpc;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Guessers: threads that each, over and over, open a connection from another loopback address
 * ({@code 127.0.0.2}, so that the server counts them apart from the measured clients on
 * {@code 127.0.0.1}), say hello with a token the server does not know, wait for the refusal and
 * close. Plaintext; for a server with auth on (bench --auth --w4-flood N).
 */
final class BadCredentialFlood implements AutoCloseable {

  static final String FROM = "127.0.0.2";

  private final List<Thread> threads = new ArrayList<>();
  private final AtomicLong attempts = new AtomicLong();
  private volatile boolean stopped;

  BadCredentialFlood(String target, int threadCount) {
    for (int i = 0; i < threadCount; i++) {
      Thread t = new Thread(() -> loop(target), "bench-flood-" + i);
      t.setDaemon(true);
      threads.add(t);
      t.start();
    }
  }

  /** Hellos sent so far. */
  long attempts() {
    return attempts.get();
  }

  private void loop(String target) {
    while (!stopped) {
      ManagedChannel channel = NettyChannelBuilder.forTarget(target).usePlaintext()
          .localSocketPicker(new NettyChannelBuilder.LocalSocketPicker() {
            @Override
            public SocketAddress createSocketAddress(SocketAddress remote, io.grpc.Attributes attrs) {
              return new InetSocketAddress(FROM, 0);
            }
          }).build();
      try {
        CountDownLatch answered = new CountDownLatch(1);
        StreamObserver<ClientFrame> out = SessionGrpc.newStub(channel).connect(new StreamObserver<ServerFrame>() {
          @Override
          public void onNext(ServerFrame f) {
            answered.countDown();
          }

          @Override
          public void onError(Throwable t) {
            answered.countDown();
          }

          @Override
          public void onCompleted() {
            answered.countDown();
          }
        });
        out.onNext(ClientFrame.newBuilder().setRequestId("1")
            .setHello(Hello.newBuilder().setClientId("guesser").setToken("rst_guess-" + attempts.get())).build());
        attempts.incrementAndGet();
        answered.await(5, TimeUnit.SECONDS);
        out.onCompleted();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        // a refused or reset connection: the next guess
      } finally {
        channel.shutdownNow();
      }
    }
  }

  @Override
  public void close() throws InterruptedException {
    stopped = true;
    for (Thread t : threads) {
      t.join(10_000);
    }
  }
}
