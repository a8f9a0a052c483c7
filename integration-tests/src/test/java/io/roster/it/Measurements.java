package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.xds.shaded.io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.roster.client.DrainResult;
import io.roster.client.Instance;
import io.roster.client.InstancesChangeEvent;
import io.roster.client.Listener;
import io.roster.client.RosterClient;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import io.roster.server.testing.TcpProxy;

/**
 * Latency (register → notify and → an xDS client's EDS update, kill -9 and freeze → removal, drain), start → SERVING, idle RSS
 * and restart figures, measured against the real server jar with real processes. Not part of
 * {@code make test} (tag "measure"); run with {@code make measure}. Prints a table and writes
 * it to integration-tests/target/measurements.txt. Timings here are reports, not assertions.
 * The correctness checks made along the way (drain acked by every subscriber, restart confirmed
 * by the new server) also run, at small sizes, in {@code make test}: {@link MeasuredBehaviourTest}.
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
        // at once". Back-to-back changes are coalesced by design; the bench's W4 covers rates.
        LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        long start = System.nanoTime();
        provider.registerInstance("m-notify", Instance.of("10.9.0.1", port));
        Awaitility.await().atMost(Timing.seconds(10)).pollInterval(Duration.ofMillis(1))
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
          Awaitility.await().atMost(Timing.seconds(10)).until(() -> t.seenAt.containsKey(port));
          long start = System.nanoTime();
          p.kill9();
          Awaitility.await().atMost(Timing.seconds(20)).pollInterval(Duration.ofMillis(1))
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
      Awaitility.await().atMost(Timing.seconds(20)).until(() -> t.seenAt.size() == TRIALS);
      long start = System.nanoTime();
      proxies.forEach(TcpProxy::freeze);
      Awaitility.await().atMost(Timing.seconds(60)).pollInterval(Duration.ofMillis(5))
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
        // Idle: let start-up garbage and JIT settle, then read RSS (a pause, not synchronisation).
        LockSupport.parkNanos(Duration.ofSeconds(3).toNanos());
        rss.add(s.rssKib());
      }
    }
    report("process start -> health SERVING", startup);
    Collections.sort(rss);
    REPORT.add(String.format("%-58s p50 %6.1f MB   p99 %6.1f MB   max %6.1f MB", "idle RSS after SERVING + 3 s",
        rss.get(rss.size() / 2) / 1024.0, rss.get(idx99(rss.size())) / 1024.0, rss.get(rss.size() - 1) / 1024.0));
  }

  /**
   * Drain round trip: one provider, N subscribers (SDK clients in this JVM on one shared
   * listener executor, no polling); each trial registers a fresh instance, waits until every
   * subscriber's cache holds it, then times {@code drain(10 s)} from call to return. The same
   * subscribers serve every N (the first N of them subscribe to that N's service).
   */
  @Test
  @Order(5)
  void drainRoundTrip() throws Exception {
    int[] sizes = {1, 10, 100};
    int warmup = 3; // per N, not reported: the first drains also warm up the JIT
    ExecutorService listeners = Executors.newFixedThreadPool(4, r -> {
      Thread t = new Thread(r, "m-drain-listener");
      t.setDaemon(true);
      return t;
    });
    List<RosterClient> subs = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    try (RosterClient provider = RosterClient.builder().serverAddresses(server.address())
        .clientName("m-drain-provider").drainTimeout(Duration.ZERO).build()) {
      for (int i = 0; i < sizes[sizes.length - 1]; i++) {
        subs.add(RosterClient.builder().serverAddresses(server.address()).clientName("m-drain-sub")
            .listenerExecutor(listeners).pollEnabled(false).build());
      }
      for (int n : sizes) {
        String service = "m-drain-" + n;
        List<RosterClient> group = subs.subList(0, n);
        for (RosterClient c : group) {
          c.subscribe(service, e -> { });
        }
        List<Long> nanos = new ArrayList<>();
        for (int i = 0; i < warmup + TRIALS; i++) {
          int port = 23000 + i;
          provider.registerInstance(service, Instance.of("10.9.0.4", port));
          Awaitility.await().atMost(Timing.seconds(20)).pollInterval(Duration.ofMillis(2))
              .until(() -> group.stream().allMatch(c -> c.getAllInstances(service).stream().anyMatch(x -> x.port() == port)));
          // Pacing, not synchronisation: a drain within the push window (--push-window, 20 ms)
          // of the registration's push is coalesced with it and waits out the window; a
          // provider drains long after it registered, so isolate the drain's push.
          LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
          long start = System.nanoTime();
          DrainResult r = provider.drain(Duration.ofSeconds(10));
          long took = System.nanoTime() - start;
          if (r.timedOut() != 0 || r.acked() != n) {
            problems.add("N=" + n + " trial " + i + ": " + r);
          }
          if (i >= warmup) {
            nanos.add(took);
          }
        }
        report(String.format("drain(10s) round trip, %d subscriber%s", n, n == 1 ? "" : "s"), nanos);
      }
      REPORT.add(String.format("%-58s %s", "  drain results (each: timedOut == 0, acked == N)",
          problems.isEmpty() ? "all ok" : problems.size() + " not ok: " + problems));
    } finally {
      subs.forEach(RosterClient::close);
      listeners.shutdownNow();
    }
    assertThat(problems).as("drain results with timedOut != 0 or acked != N").isEmpty();
  }

  @Test
  @Order(6)
  void serverRestartWindowDefaultHold() throws Exception {
    serverRestartWindow("hold 4s (default)", null);
  }

  @Test
  @Order(7)
  void serverRestartWindowNoHold() throws Exception {
    serverRestartWindow("hold 0", Duration.ZERO);
  }

  /** What a subscriber's listener was told, with when. */
  private record Seen(long atNanos, boolean present, long revision) {}

  /**
   * Standalone server restart (SIGTERM, a new process on the same port) with a provider process
   * and a subscriber client in this JVM. Per trial: how long the subscriber's listener showed the
   * provider absent, and how long from SIGTERM until the subscriber's cache holds the provider as
   * confirmed by the new server: a cached revision newer than the one before the restart (the
   * revisions are wall-clock microseconds, so the new server's are newer) that lists it.
   */
  private void serverRestartWindow(String mode, Duration hold) throws Exception {
    if (hold == null) {
      REPORT.add("restart: SIGTERM to a standalone server, new process on the same port; provider process, "
          + "subscriber in the test JVM. \"confirmed\": the subscriber's cache lists the provider at a "
          + "revision of the new server. \"absent\": listener showed it gone (event to event), 0 if never.");
    }
    String service = "m-restart";
    int providerPort = 24000;
    int serverPort = Ports.free();
    ServerProcess srv = ServerProcess.start("127.0.0.1", serverPort);
    List<Seen> seen = new CopyOnWriteArrayList<>();
    Listener listener = e -> seen.add(new Seen(System.nanoTime(),
        e.instances().stream().anyMatch(i -> i.port() == providerPort), e.revision()));
    RosterClient.Builder builder = RosterClient.builder().serverAddresses(srv.address()).clientName("m-restart-sub");
    if (hold != null) {
      builder.reconnectEmptyHold(hold);
    }
    List<Long> absent = new ArrayList<>();
    List<Long> confirmed = new ArrayList<>();
    List<Long> serving = new ArrayList<>();
    List<String> gaps = new ArrayList<>(); // "largest first" after sorting by gap
    List<Long> gapSizes = new ArrayList<>();
    try (ProviderProcess provider = new ProviderProcess(srv.address(), service, "10.9.0.5", providerPort);
        RosterClient sub = builder.build()) {
      provider.awaitRegistered();
      sub.subscribe(service, listener);
      Awaitility.await().atMost(Timing.seconds(10)).until(() -> !seen.isEmpty() && seen.get(seen.size() - 1).present());
      for (int trial = 0; trial < TRIALS; trial++) {
        InstancesChangeEvent before = cached(sub, service);
        assertThat(before.instances()).as("provider listed before trial %d", trial).isNotEmpty();
        long revisionBefore = before.revision();
        int from = seen.size();

        long sigterm = System.nanoTime();
        srv.stop();
        srv = ServerProcess.start("127.0.0.1", serverPort);
        serving.add(System.nanoTime() - sigterm);

        AtomicLong confirmedAt = new AtomicLong();
        Awaitility.await().atMost(Timing.seconds(30)).pollInterval(Duration.ofMillis(2)).until(() -> {
          InstancesChangeEvent now = cached(sub, service);
          if (now.revision() > revisionBefore && now.instances().stream().anyMatch(i -> i.port() == providerPort)) {
            confirmedAt.set(System.nanoTime());
            return true;
          }
          return false;
        });
        // The listener hears of a state before a probe listener added later does, so its events
        // up to the confirmation are all in `seen` now. Take the event's time when the new state
        // was a visible change; otherwise (same list, new revision: no event) the probe's.
        long confirmedNanos = confirmedAt.get();
        List<Seen> events = new ArrayList<>(seen.subList(from, seen.size()));
        for (Seen s : events) {
          if (s.present() && s.revision() > revisionBefore) {
            confirmedNanos = Math.min(confirmedNanos, s.atNanos());
            break;
          }
        }
        confirmed.add(confirmedNanos - sigterm);

        long gap = 0;
        long vanishedAt = -1;
        long firstGone = -1;
        long lastBack = -1;
        for (Seen s : events) {
          if (!s.present() && vanishedAt < 0) {
            vanishedAt = s.atNanos();
            firstGone = firstGone < 0 ? vanishedAt : firstGone;
          } else if (s.present() && vanishedAt >= 0) {
            gap += s.atNanos() - vanishedAt;
            lastBack = s.atNanos();
            vanishedAt = -1;
          }
        }
        assertThat(vanishedAt).as("trial %d ends with the provider listed", trial).isNegative();
        absent.add(gap);
        if (gap > 0) {
          // When it happened, relative to SIGTERM and to the new server answering: a gap that
          // starts before the subscriber could have reconnected points at its poll.
          gapSizes.add(gap);
          gaps.add(String.format("#%d %.0f ms (gone +%.0f, back +%.0f; SERVING +%.0f)", trial, gap / 1e6,
              (firstGone - sigterm) / 1e6, (lastBack - sigterm) / 1e6, serving.get(trial) / 1e6));
        }

        if (hold == null || !hold.isZero()) {
          // Pacing, not synchronisation: each restart is an isolated event. A hold started at
          // this trial's reconnect (no later than confirmedNanos) has a release timer pending
          // for up to the hold; let it fire before the next restart.
          long until = confirmedNanos + (hold == null ? Duration.ofSeconds(4) : hold).toNanos() + Duration.ofMillis(300).toNanos();
          LockSupport.parkNanos(Math.max(0, until - System.nanoTime()));
        }
      }
    } finally {
      srv.close();
    }
    report("restart, " + mode + ": SIGTERM -> new server SERVING", serving);
    report("restart, " + mode + ": SIGTERM -> sub confirmed", confirmed);
    report("restart, " + mode + ": provider absent at sub", absent);
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < gaps.size(); i++) {
      order.add(i);
    }
    order.sort((a, b) -> Long.compare(gapSizes.get(b), gapSizes.get(a)));
    List<String> largest = new ArrayList<>();
    for (int i = 0; i < Math.min(3, order.size()); i++) {
      largest.add(gaps.get(order.get(i)));
    }
    REPORT.add(String.format("  %-56s %d of %d trials%s", "provider absent at sub, trials with a gap:", gaps.size(),
        absent.size(), largest.isEmpty() ? "" : "; largest: " + String.join(", ", largest)));
  }

  /** The subscriber's cached state: a listener added to a cached service hears it at once. */
  private static InstancesChangeEvent cached(RosterClient client, String service) throws Exception {
    CompletableFuture<InstancesChangeEvent> first = new CompletableFuture<>();
    Listener probe = first::complete;
    client.subscribe(service, probe);
    try {
      return first.get(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS);
    } finally {
      client.unsubscribe(service, probe);
    }
  }

  /**
   * A registration → the ADS stream of an xDS client subscribed to the service's endpoints
   * receives the assignment that has it (docs/xds.md): what a proxyless gRPC client waits for.
   */
  @Test
  @Order(20)
  void registerToXdsEndpoints() throws Exception {
    String endpoints = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
    io.grpc.ManagedChannel channel = io.grpc.Grpc.newChannelBuilder(server.address(),
        io.grpc.InsecureChannelCredentials.create()).build();
    java.util.Map<Integer, Long> seenAt = new java.util.concurrent.ConcurrentHashMap<>();
    java.util.concurrent.atomic.AtomicReference<io.grpc.stub.StreamObserver<DiscoveryRequest>> requests =
        new java.util.concurrent.atomic.AtomicReference<>();
    requests.set(AggregatedDiscoveryServiceGrpc.newStub(channel).streamAggregatedResources(
        new io.grpc.stub.StreamObserver<DiscoveryResponse>() {
          @Override
          public void onNext(DiscoveryResponse r) {
            long now = System.nanoTime();
            for (com.google.protobuf.Any a : r.getResourcesList()) {
              try {
                for (var locality : a.unpack(ClusterLoadAssignment.class).getEndpointsList()) {
                  for (var e : locality.getLbEndpointsList()) {
                    seenAt.putIfAbsent(e.getEndpoint().getAddress().getSocketAddress().getPortValue(), now);
                  }
                }
              } catch (com.google.protobuf.InvalidProtocolBufferException ex) {
                throw new IllegalStateException(ex);
              }
            }
            requests.get().onNext(DiscoveryRequest.newBuilder().setTypeUrl(endpoints).addResourceNames("m-xds")
                .setVersionInfo(r.getVersionInfo()).setResponseNonce(r.getNonce()).build()); // ACK
          }

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}
        }));
    requests.get().onNext(DiscoveryRequest.newBuilder().setTypeUrl(endpoints).addResourceNames("m-xds").build());
    try (RosterClient provider = RosterClient.builder().serverAddresses(server.address()).build()) {
      List<Long> nanos = new ArrayList<>();
      for (int i = 0; i < TRIALS + 5; i++) {
        int port = 21000 + i;
        // Pacing, as in registerToNotify: each change outside the previous one's push window.
        LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        long start = System.nanoTime();
        provider.registerInstance("m-xds", Instance.of("10.9.1.1", port));
        Awaitility.await().atMost(Timing.seconds(10)).pollInterval(Duration.ofMillis(1))
            .until(() -> seenAt.containsKey(port));
        if (i >= 5) {
          nanos.add(seenAt.get(port) - start);
        }
      }
      report("register -> xDS client's EDS update", nanos);
    } finally {
      channel.shutdownNow();
    }
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
