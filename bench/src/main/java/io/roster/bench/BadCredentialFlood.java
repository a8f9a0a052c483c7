package io.roster.bench;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.SessionGrpc;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Guessers in a child JVM of their own, a stand-in for a machine of their own: threads that each,
 * over and over, open a connection from another loopback address ({@code 127.0.0.2}, so that the
 * server counts them apart from the measured clients on {@code 127.0.0.1}), say hello with a
 * token the server does not know, wait for the refusal (or the connection's end) and close.
 * Plaintext; for a server with auth on (bench --auth --w4-flood N). The child runs at the nice
 * level given: 19 leaves the two cores to the server and the measured clients first, so that what
 * the flood costs them is what the server does about it; 0 makes the guessers compete as equals.
 */
final class BadCredentialFlood implements AutoCloseable {

  static final String FROM = "127.0.0.2";

  private static final String ATTEMPTS = "ATTEMPTS ";

  private final Process process;

  BadCredentialFlood(String target, int threads, int nice) throws IOException {
    List<String> cmd = new ArrayList<>();
    if (nice != 0) {
      cmd.addAll(List.of("nice", "-n", Integer.toString(nice)));
    }
    cmd.addAll(ChildProvider.java(BadCredentialFlood.class, target, Integer.toString(threads)));
    process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
  }

  /** Stops the guessers and returns how many hellos they sent. */
  long stop() throws IOException, InterruptedException {
    process.getOutputStream().close();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("the flood's JVM did not stop");
    }
    return out.lines().filter(l -> l.startsWith(ATTEMPTS)).mapToLong(l -> Long.parseLong(l.substring(ATTEMPTS.length())))
        .findFirst().orElseThrow(() -> new IllegalStateException("the flood's JVM said: " + out));
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroyForcibly();
      process.waitFor();
    }
  }

  /** The child: args target threads; guesses until its stdin ends, then prints the count. */
  public static void main(String[] args) throws IOException, InterruptedException {
    Guessers guessers = new Guessers(args[0], Integer.parseInt(args[1]));
    System.in.readAllBytes();
    guessers.stop();
    System.out.println(ATTEMPTS + guessers.attempts.get());
    System.out.flush();
  }

  private static final class Guessers {

    private final List<Thread> threads = new ArrayList<>();
    private final AtomicLong attempts = new AtomicLong();
    private volatile boolean stopped;

    Guessers(String target, int threadCount) {
      for (int i = 0; i < threadCount; i++) {
        Thread t = new Thread(() -> loop(target), "bench-flood-" + i);
        t.setDaemon(true);
        threads.add(t);
        t.start();
      }
    }

    void stop() throws InterruptedException {
      stopped = true;
      for (Thread t : threads) {
        t.join(10_000);
      }
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
  }
}
