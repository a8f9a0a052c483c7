package io.roster.server.probe;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.roster.server.registry.HealthCheck;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The probes against real TCP and HTTP targets on loopback. */
class ProbeClientTest {

  /** Long enough for a loaded machine to answer a healthy target; the timeout tests wait it out. */
  private static final Duration TIMEOUT = Duration.ofSeconds(2);
  private final ProbeClient client = new ProbeClient(TIMEOUT, 16);
  private final List<AutoCloseable> targets = new ArrayList<>();
  private final java.util.concurrent.ScheduledExecutorService answers =
      java.util.concurrent.Executors.newScheduledThreadPool(2);

  @AfterEach
  void close() throws Exception {
    client.close();
    answers.shutdownNow();
    for (AutoCloseable t : targets) {
      t.close();
    }
  }

  private Probes.Outcome probe(int port, HealthCheck check) throws Exception {
    CompletableFuture<Probes.Outcome> done = new CompletableFuture<>();
    client.probe("127.0.0.1", port, check, done::complete);
    // Every probe ends within its timeout, whatever the target does; a little room for the scheduler.
    return done.get(TIMEOUT.toMillis() + 2000, TimeUnit.MILLISECONDS);
  }

  private HttpServer http(int status, Duration delay, Map<String, String> headers, List<String> requests)
      throws IOException {
    HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    s.createContext("/", x -> {
      requests.add(x.getRequestMethod() + " " + x.getRequestURI() + " " + x.getRequestHeaders().getFirst("X-Probe")
          + " " + x.getRequestHeaders().getFirst("User-Agent"));
      // The target's own slowness: it answers after delay, from another thread.
      answers.schedule(() -> {
        try {
          headers.forEach((k, v) -> x.getResponseHeaders().add(k, v));
          x.sendResponseHeaders(status, -1);
        } catch (IOException e) {
          // the probe gave up first
        }
        x.close();
      }, delay.toMillis(), TimeUnit.MILLISECONDS);
    });
    s.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
    s.start();
    targets.add(() -> s.stop(0));
    return s;
  }

  @Test
  void tcpIsHealthyWhenSomethingListensAndUnhealthyWhenNothingDoes() throws Exception {
    ServerSocket listening = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    targets.add(listening);
    assertThat(probe(listening.getLocalPort(), HealthCheck.DEFAULT).kind()).isEqualTo(Probes.Kind.HEALTHY);
    int port = listening.getLocalPort();
    listening.close();
    Probes.Outcome stopped = probe(port, HealthCheck.DEFAULT);
    assertThat(stopped.kind()).isEqualTo(Probes.Kind.UNHEALTHY);
    assertThat(stopped.detail()).isNotEmpty();
  }

  @Test
  void httpSendsThePathAndHeadersAndComparesTheStatus() throws Exception {
    List<String> requests = new CopyOnWriteArrayList<>();
    HttpServer ok = http(204, Duration.ZERO, Map.of(), requests);
    HealthCheck check = HealthCheck.http(0, "/health?deep=1", 204, Map.of("X-Probe", "yes"));
    assertThat(probe(ok.getAddress().getPort(), check).kind()).isEqualTo(Probes.Kind.HEALTHY);
    assertThat(requests).containsExactly("GET /health?deep=1 yes " + ProbeClient.USER_AGENT);

    HttpServer failing = http(503, Duration.ZERO, Map.of(), requests);
    Probes.Outcome down = probe(failing.getAddress().getPort(), check);
    assertThat(down.kind()).isEqualTo(Probes.Kind.UNHEALTHY);
    assertThat(down.detail()).contains("503").contains("204");
  }

  @Test
  void aRedirectIsAnUnexpectedStatusAndIsNeverFollowed() throws Exception {
    List<String> elsewhere = new CopyOnWriteArrayList<>();
    HttpServer other = http(200, Duration.ZERO, Map.of(), elsewhere);
    HttpServer redirecting = http(302, Duration.ZERO,
        Map.of("Location", "http://127.0.0.1:" + other.getAddress().getPort() + "/"), new CopyOnWriteArrayList<>());
    Probes.Outcome o = probe(redirecting.getAddress().getPort(), HealthCheck.http(0, "/", 200, Map.of()));
    assertThat(o.kind()).isEqualTo(Probes.Kind.UNHEALTHY);
    assertThat(o.detail()).contains("302");
    assertThat(elsewhere).as("the redirect's target is never asked").isEmpty();
  }

  @Test
  void aSlowTargetFailsAtTheTimeoutAndAQuickEnoughOnePasses() throws Exception {
    List<String> requests = new CopyOnWriteArrayList<>();
    HttpServer slow = http(200, TIMEOUT.multipliedBy(3), Map.of(), requests);
    Probes.Outcome late = probe(slow.getAddress().getPort(), HealthCheck.http(0, "/", 200, Map.of()));
    assertThat(late.kind()).isEqualTo(Probes.Kind.UNHEALTHY);
    assertThat(late.detail()).contains("no answer within " + TIMEOUT.toMillis() + " ms");

    HttpServer quick = http(200, TIMEOUT.dividedBy(10), Map.of(), requests);
    assertThat(probe(quick.getAddress().getPort(), HealthCheck.http(0, "/", 200, Map.of())).kind())
        .isEqualTo(Probes.Kind.HEALTHY);
  }

  @Test
  void aTargetThatAcceptsAndNeverAnswersOrDripsEndlessHeadersCostsOneTimeout() throws Exception {
    ServerSocket hung = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    targets.add(hung);
    List<Socket> accepted = new CopyOnWriteArrayList<>();
    AtomicInteger dripped = new AtomicInteger();
    Thread acceptor = new Thread(() -> {
      try {
        while (true) {
          Socket s = hung.accept();
          accepted.add(s);
          if (accepted.size() == 2) {
            // The second connection gets a status line and then headers without end.
            OutputStream out = s.getOutputStream();
            out.write("HTTP/1.1 200 OK\r\n".getBytes(StandardCharsets.US_ASCII));
            try {
              while (true) {
                out.write(("X-Pad-" + dripped.incrementAndGet() + ": " + "a".repeat(100) + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
              }
            } catch (IOException closed) {
              // the prober closed it
            }
          }
        }
      } catch (IOException e) {
        // closed at the end of the test
      }
    });
    acceptor.setDaemon(true);
    acceptor.start();
    Probes.Outcome silent = probe(hung.getLocalPort(), HealthCheck.http(0, "/", 200, Map.of()));
    assertThat(silent.kind()).isEqualTo(Probes.Kind.UNHEALTHY);
    assertThat(silent.detail()).contains("no answer within");

    Probes.Outcome endless = probe(hung.getLocalPort(), HealthCheck.http(0, "/", 200, Map.of()));
    assertThat(endless.kind()).isEqualTo(Probes.Kind.UNHEALTHY);
    for (Socket s : accepted) {
      s.close();
    }
    assertThat(client.inFlight()).isZero();
  }

  @Test
  void hostNamesAreNeverResolvedAndProbesBeyondTheCapAreSkipped() throws Exception {
    CompletableFuture<Probes.Outcome> named = new CompletableFuture<>();
    client.probe("localhost", 80, HealthCheck.DEFAULT, named::complete);
    assertThat(named.get(1, TimeUnit.SECONDS).kind()).isEqualTo(Probes.Kind.SKIPPED);

    ServerSocket hung = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    targets.add(hung);
    List<CompletableFuture<Probes.Outcome>> all = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      CompletableFuture<Probes.Outcome> f = new CompletableFuture<>();
      client.probe("127.0.0.1", hung.getLocalPort(), HealthCheck.http(0, "/", 200, Map.of()), f::complete);
      all.add(f);
    }
    long skipped = 0;
    for (CompletableFuture<Probes.Outcome> f : all) {
      skipped += f.get(TIMEOUT.toMillis() + 2000, TimeUnit.MILLISECONDS).kind() == Probes.Kind.SKIPPED ? 1 : 0;
    }
    assertThat(skipped).as("16 in flight at most").isEqualTo(4);
  }

  @Test
  void aTargetOutsideThePolicyIsSkippedWithoutAConnection() throws Exception {
    List<String> requests = new java.util.concurrent.CopyOnWriteArrayList<>();
    HttpServer target = http(200, Duration.ZERO, Map.of(), requests);
    int port = target.getAddress().getPort();
    try (ProbeClient only10 = new ProbeClient(TIMEOUT, 16, ProbePolicy.parse("10.0.0.0/8"))) {
      CompletableFuture<Probes.Outcome> refused = new CompletableFuture<>();
      only10.probe("127.0.0.1", port, HealthCheck.http(0, "/", 200, Map.of()), refused::complete);
      Probes.Outcome o = refused.get(TIMEOUT.toMillis() + 2000, TimeUnit.MILLISECONDS);
      assertThat(o.kind()).isEqualTo(Probes.Kind.SKIPPED);
      assertThat(o.detail()).isEqualTo("the target 127.0.0.1:" + port + " is refused: not in --probe-allow 10.0.0.0/8");
      CompletableFuture<Probes.Outcome> metadata = new CompletableFuture<>();
      client.probe("169.254.169.254", 80, HealthCheck.DEFAULT, metadata::complete);
      assertThat(metadata.get(TIMEOUT.toMillis() + 2000, TimeUnit.MILLISECONDS).kind()).isEqualTo(Probes.Kind.SKIPPED);
    }
    // The same target under the default policy is probed: the request reaches it.
    assertThat(probe(port, HealthCheck.http(0, "/", 200, Map.of())).kind()).isEqualTo(Probes.Kind.HEALTHY);
    assertThat(requests).as("only the probe the policy let through").hasSize(1);
  }
}
