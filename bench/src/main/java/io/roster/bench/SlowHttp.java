package io.roster.bench;

import java.util.Map;
import io.roster.bench.driver.BenchClient;
import io.roster.bench.driver.Driver;
import io.roster.bench.driver.Drivers;
import io.roster.bench.driver.Endpoint;
import io.roster.bench.driver.RosterDriver;
import io.roster.server.testing.process.ServerProcess;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * slowhttp: what clients that trickle their HTTP requests do to everyone else. A server with its
 * HTTP port on; for {@code --slowhttp-seconds}, one thread sends HTTP requests one after another
 * (GET of the Nacos metrics route, a 10 s timeout each) and an SDK client registers and
 * deregisters an instance every 100 ms, first alone and then beside {@code --slowhttp-clients}
 * connections that each send a request's start and then one byte a second, half of them in their
 * headers and half in their body, opened again as soon as the server closes one (as an attacker
 * would). Reports the HTTP requests' latency and failures, the gRPC calls' latency, and how long
 * the server let a trickling connection live.
 */
final class SlowHttp {

  private SlowHttp() {}

  static Result run(Args args, Path jar, Path logDir) throws Exception {
    int clients = args.size("slowhttp-clients");
    int seconds = args.size("slowhttp-seconds");
    Result r = new Result("slowhttp", String.format("Slow HTTP clients: %d connections trickling a byte a second "
        + "(half in their headers, half in a 60,000-byte body, reopened when closed); HTTP GETs and gRPC calls beside them, "
        + "%d s alone then %d s with them", clients, seconds, seconds));
    ServerProcess server = LocalServer.withHttpPort(jar, args.serverJvm, logDir, "slowhttp");
    int port = server.port;
    int httpPort = port - 1000;
    try (Driver driver = Drivers.create("roster", "127.0.0.1:" + port, RosterDriver.MassMode.SDK, null, "")) {
      BenchClient client = driver.client("slowhttp-provider");
      Phase alone = measure(httpPort, client, seconds);
      Phase beside;
      try (Tricklers t = new Tricklers(httpPort, clients)) {
        beside = measure(httpPort, client, seconds);
        t.stop();
        r.row("trickling connections closed by the server", String.format("%d; each lived %s", t.closed(),
            Stats.ofNanosAsMillis(t.lifetimes()).format("ms")));
      }
      for (Map.Entry<String, Phase> e : List.of(Map.entry("alone", alone), Map.entry("beside the tricklers", beside))) {
        String when = e.getKey();
        Phase p = e.getValue();
        r.row("HTTP GET, " + when, Stats.ofNanosAsMillis(p.http).format("ms") + ", " + p.failures + " failed");
        r.row("gRPC register/deregister, " + when, Stats.ofNanosAsMillis(p.grpc).format("ms"));
      }
    } finally {
      server.close();
    }
    return r;
  }

  private record Phase(List<Long> http, List<Long> grpc, int failures) {}

  private static Phase measure(int httpPort, BenchClient client, int seconds) throws Exception {
    List<Long> http = new ArrayList<>();
    List<Long> grpc = new ArrayList<>();
    int[] failures = new int[1];
    Thread calls = new Thread(() -> {
      long end = System.nanoTime() + seconds * 1_000_000_000L;
      for (int k = 0; System.nanoTime() < end; k++) {
        Endpoint e = new Endpoint("10.8.0.1", 40000 + k / 2);
        long t0 = System.nanoTime();
        if (k % 2 == 0) {
          client.register("slowhttp-svc", e);
        } else {
          client.deregister("slowhttp-svc", e);
        }
        synchronized (grpc) {
          grpc.add(System.nanoTime() - t0);
        }
        LockSupportPark.millis(100);
      }
    }, "slowhttp-grpc");
    calls.start();
    HttpClient httpClient = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    HttpRequest get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/nacos/v1/ns/operator/metrics"))
        .timeout(Duration.ofSeconds(10)).build();
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    while (System.nanoTime() < end) {
      long t0 = System.nanoTime();
      try {
        if (httpClient.send(get, BodyHandlers.ofString()).statusCode() == 200) {
          http.add(System.nanoTime() - t0);
        } else {
          failures[0]++;
        }
      } catch (IOException e) {
        failures[0]++;
      }
      LockSupportPark.millis(20);
    }
    calls.join();
    synchronized (grpc) {
      return new Phase(http, new ArrayList<>(grpc), failures[0]);
    }
  }

  /** Parks the current thread (the bench paces its own calls; nothing waits on another thread here). */
  private static final class LockSupportPark {
    static void millis(long ms) {
      java.util.concurrent.locks.LockSupport.parkNanos(ms * 1_000_000L);
    }
  }

  /** The trickling connections: a thread sends each its next byte once a second and reopens the closed. */
  private static final class Tricklers implements AutoCloseable {
    private final int port;
    private final Thread thread;
    private volatile boolean stopped;
    private final List<SocketChannel> open = new ArrayList<>();
    private final List<Long> openedAt = new ArrayList<>();
    private final List<Long> lifetimes = new ArrayList<>();
    private long nextTick;
    private int closed;

    Tricklers(int port, int count) throws IOException {
      this.port = port;
      for (int i = 0; i < count; i++) {
        open.add(null);
        openedAt.add(0L);
        reopen(i);
      }
      nextTick = System.nanoTime() + 1_000_000_000L;
      thread = new Thread(() -> {
        try {
          while (!stopped) {
            tick();
            LockSupportPark.millis(50);
          }
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }, "slowhttp-tricklers");
      thread.setDaemon(true);
      thread.start();
    }

    /** Stops trickling; the counts are final afterwards. */
    void stop() throws InterruptedException {
      stopped = true;
      thread.join();
    }

    private void reopen(int i) throws IOException {
      SocketChannel c = SocketChannel.open(new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), port));
      c.configureBlocking(false);
      String start = i % 2 == 0
          ? "GET /nacos/v1/ns/operator/metrics HTTP/1.1\r\nHost: roster\r\nX-Slow: "
          : "POST /nacos/v1/ns/instance HTTP/1.1\r\nHost: roster\r\nContent-Type: application/x-www-form-urlencoded\r\n"
              + "Content-Length: 60000\r\n\r\nserviceName=";
      c.write(ByteBuffer.wrap(start.getBytes(StandardCharsets.US_ASCII)));
      open.set(i, c);
      openedAt.set(i, System.nanoTime());
    }

    private void tick() throws IOException {
      if (System.nanoTime() < nextTick) {
        return;
      }
      nextTick += 1_000_000_000L;
      for (int i = 0; i < open.size(); i++) {
        SocketChannel c = open.get(i);
        boolean gone;
        try {
          c.write(ByteBuffer.wrap(new byte[] {'a'}));
          gone = c.read(ByteBuffer.allocate(4096)) < 0;
        } catch (IOException e) {
          gone = true;
        }
        if (gone) {
          lifetimes.add(System.nanoTime() - openedAt.get(i));
          closed++;
          c.close();
          reopen(i);
        }
      }
    }

    int closed() {
      return closed;
    }

    List<Long> lifetimes() {
      return lifetimes;
    }

    @Override
    public void close() throws IOException, InterruptedException {
      stop();
      for (SocketChannel c : open) {
        c.close();
      }
    }
  }
}
