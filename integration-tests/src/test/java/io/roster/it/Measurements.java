package io.roster.it;

import io.roster.client.Instance;
import io.roster.client.InstancesChangeEvent;
import io.roster.client.RosterClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The issue-2 figures, measured against the real server jar with real processes. Not part of
 * {@code make test} (tag "measure"); run with {@code make measure}. Prints a table and writes
 * it to integration-tests/target/measurements.txt. Timings here are reports, not assertions.
 */
@Tag("measure")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class Measurements {

  private static final int TRIALS = Integer.getInteger("roster.measure.trials", 20);
  private static final List<String> REPORT = Collections.synchronizedList(new ArrayList<>());
  private static ServerProcess server;

  @BeforeAll
  static void start() {
    server = ServerProcess.start("127.0.0.1", Ports.free());
    REPORT.add(String.format("Roster measurements: %d trials each; %s, %d cores, Java %s", TRIALS,
        System.getProperty("os.name"), Runtime.getRuntime().availableProcessors(), System.getProperty("java.version")));
  }

  @AfterAll
  static void finish() throws Exception {
    server.close();
    String text = String.join("\n", REPORT) + "\n";
    System.out.println(text);
    Files.writeString(Path.of("target", "measurements.txt"), text);
  }

  /** Tracks, per port, when it first appeared and when it first disappeared. */
  private static final class Tracker {
    final Map<Integer, Long> seenAt = new ConcurrentHashMap<>();
    final Map<Integer, Long> goneAt = new ConcurrentHashMap<>();

    void onEvent(InstancesChangeEvent e) {
      long now = System.nanoTime();
      Set<Integer> ports = new HashSet<>();
      for (Instance i : e.instances()) {
        ports.add(i.port());
        seenAt.putIfAbsent(i.port(), now);
      }
      for (Integer p : seenAt.keySet()) {
        if (!ports.contains(p)) {
          goneAt.putIfAbsent(p, now);
        }
      }
    }
  }

  @Test
  @Order(1)
  void registerToNotify() throws Exception {
    Tracker t = new Tracker();
    try (RosterClient sub = RosterClient.builder().serverAddresses(server.address()).build();
        RosterClient provider = RosterClient.builder().serverAddresses(server.address()).build()) {
      sub.subscribe("m-notify", t::onEvent);
      List<Long> nanos = new ArrayList<>();
      for (int i = 0; i < TRIALS + 5; i++) {
        int port = 20000 + i;
        // Pacing, not synchronisation: each change is isolated, outside the previous push's
        // coalescing window (--push-window, 20 ms), so this measures "a lone change goes out
        // at once". Back-to-back changes are coalesced by design; issue 3's W4 covers rates.
        LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        long start = System.nanoTime();
        provider.registerInstance("m-notify", Instance.of("10.9.0.1", port));
        Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(1))
            .until(() -> t.seenAt.containsKey(port));
        if (i >= 5) { // the first few warm up the JIT
          nanos.add(t.seenAt.get(port) - start);
        }
      }
      report("register -> subscriber notified", nanos);
    }
  }

  @Test
  @Order(2)
  void killNineToRemoval() throws Exception {
    Tracker t = new Tracker();
    try (RosterClient sub = RosterClient.builder().serverAddresses(server.address()).build()) {
      sub.subscribe("m-kill", t::onEvent);
      List<Long> nanos = new ArrayList<>();
      for (int i = 0; i < TRIALS; i++) {
        int port = 21000 + i;
        try (ProviderProcess p = new ProviderProcess(server.address(), "m-kill", "10.9.0.2", port)) {
          p.awaitRegistered();
          Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> t.seenAt.containsKey(port));
          long start = System.nanoTime();
          p.kill9();
          Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(1))
              .until(() -> t.goneAt.containsKey(port));
          nanos.add(t.goneAt.get(port) - start);
        }
      }
      report("kill -9 of provider -> removal seen", nanos);
    }
  }

  @Test
  @Order(3)
  void frozenToRemoval() throws Exception {
    Tracker t = new Tracker();
    List<TcpProxy> proxies = new ArrayList<>();
    List<RosterClient> providers = new ArrayList<>();
    try (RosterClient sub = RosterClient.builder().serverAddresses(server.address()).build()) {
      sub.subscribe("m-frozen", t::onEvent);
      for (int i = 0; i < TRIALS; i++) {
        TcpProxy proxy = new TcpProxy(server.host, server.port);
        proxies.add(proxy);
        RosterClient c = RosterClient.builder().serverAddresses(proxy.address()).build();
        providers.add(c);
        c.registerInstance("m-frozen", Instance.of("10.9.0.3", 22000 + i));
      }
      Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> t.seenAt.size() == TRIALS);
      long start = System.nanoTime();
      proxies.forEach(TcpProxy::freeze);
      Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(5))
          .until(() -> t.goneAt.size() == TRIALS);
      List<Long> nanos = new ArrayList<>();
      t.goneAt.values().forEach(g -> nanos.add(g - start));
      report("frozen provider -> removal seen (default keepalive 4s+5s)", nanos);
    } finally {
      providers.forEach(RosterClient::close);
      for (TcpProxy p : proxies) {
        p.close();
      }
    }
  }

  @Test
  @Order(4)
  void startupAndIdleRss() throws Exception {
    List<Long> startup = new ArrayList<>();
    List<Long> rss = new ArrayList<>();
    for (int i = 0; i < TRIALS; i++) {
      try (ServerProcess s = ServerProcess.launch("127.0.0.1", Ports.free())) {
        startup.add(s.awaitServing(Duration.ofSeconds(30)).toNanos());
        // Idle: let start-up garbage and JIT settle, then read RSS.
        Awaitility.await().pollDelay(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(4)).until(() -> true);
        rss.add(s.rssKib());
      }
    }
    report("process start -> health SERVING", startup);
    Collections.sort(rss);
    REPORT.add(String.format("%-58s p50 %6.1f MB   p99 %6.1f MB   max %6.1f MB", "idle RSS after SERVING + 3 s",
        rss.get(rss.size() / 2) / 1024.0, rss.get(idx99(rss.size())) / 1024.0, rss.get(rss.size() - 1) / 1024.0));
  }

  private static int idx99(int n) {
    return Math.min(n - 1, (int) Math.ceil(n * 0.99) - 1);
  }

  private static void report(String what, List<Long> nanos) throws IOException {
    List<Long> s = new ArrayList<>(nanos);
    Collections.sort(s);
    REPORT.add(String.format("%-58s p50 %8.1f ms  p99 %8.1f ms  max %8.1f ms  (n=%d)", what,
        s.get(s.size() / 2) / 1e6, s.get(idx99(s.size())) / 1e6, s.get(s.size() - 1) / 1e6, s.size()));
  }
}
