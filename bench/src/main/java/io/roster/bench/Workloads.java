package io.roster.bench;

import io.roster.bench.driver.BenchClient;
import io.roster.bench.driver.Driver;
import io.roster.bench.driver.Endpoint;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.IntFunction;

/**
 * The workloads. One code path for both drivers: each workload only talks to {@link Driver}
 * and {@link BenchClient}. When the server is local ({@code server != null}) each workload also
 * reports the server's CPU time over its measured phase and its RSS at the end.
 */
final class Workloads {

  private static final double MIB = 1024 * 1024;

  private final Args args;
  private final Driver driver;
  private final String target;
  private final LocalServer server;

  Workloads(Args args, Driver driver, String target, LocalServer server) {
    this.args = args;
    this.driver = driver;
    this.target = target;
    this.server = server;
  }

  Result run(String id) throws Exception {
    return switch (id) {
      case "w1" -> w1Connect();
      case "w2" -> w2Register();
      case "w3" -> w3Query();
      case "w4" -> w4Notify();
      case "w5" -> w5FanOut();
      case "w6" -> w6Crash();
      case "w7" -> w7Silent();
      case "w8" -> w8Memory();
      case "w9" -> w9DeltaPushes();
      default -> throw new IllegalArgumentException(id);
    };
  }

  // ---- Startup (needs a local server; run by BenchMain with its own servers) ----

  static Result startup(Args args, Path jar, Path logDir) {
    Result r = new Result("startup", "Startup: process start to gRPC health SERVING; idle RSS");
    int trials = args.size("startup-trials");
    double[] ms = new double[trials];
    double[] idleRss = new double[trials];
    double[] servingRss = new double[trials];
    double[] heap = new double[trials];
    long cpu = 0;
    long threads = 0;
    LocalServer.warmUpProbe();
    for (int t = 0; t < trials; t++) {
      try (LocalServer s = LocalServer.start(jar, args.serverJvm, logDir, "startup-" + t)) {
        ms[t] = s.startup.toNanos() / 1e6;
        servingRss[t] = s.rssBytes() / MIB;
        cpu += s.cpuMillis();
        parkMillis(5000); // idle: no client at all
        idleRss[t] = s.rssBytes() / MIB;
        threads = s.threads();
        heap[t] = s.heapAfterGcBytes() / MIB;
      }
    }
    Stats st = Stats.of(ms);
    Stats idle = Stats.of(idleRss);
    r.row("start -> SERVING", st.format("ms"), "<= 1000 ms (p50)", st.p50() <= 1000);
    r.row("RSS at SERVING", Stats.of(servingRss).format("MiB"));
    r.row("idle RSS (5 s after SERVING, no clients)", idle.format("MiB"), "<= 100 MB (p50)",
        idle.p50() * MIB <= 100e6);
    r.row("heap after full GC, idle", Stats.of(heap).format("MiB"));
    r.row("server CPU to SERVING", String.format("%.0f ms per start (mean)", cpu / (double) trials));
    r.row("server threads, idle", Long.toString(threads));
    r.note("startup is timed from just before the process is spawned to the first SERVING answer "
        + "(TCP probe every 2 ms, then gRPC health); the server's own log line times from JVM start");
    return r;
  }

  // ---- W1 connect ----

  private Result w1Connect() throws Exception {
    int n = args.size("w1-clients");
    Result r = new Result("w1", "W1 connect: " + n + " clients, time until all are connected");
    long cpu0 = cpu();
    List<Long> each = Collections.synchronizedList(new ArrayList<>());
    long t0 = System.nanoTime();
    List<BenchClient> clients = connectAll(n, i -> {
      long s = System.nanoTime();
      BenchClient c = driver.massClient("w1-" + i);
      each.add(System.nanoTime() - s);
      return c;
    });
    long all = System.nanoTime() - t0;
    long cpu1 = cpu();
    r.row("time to all connected", String.format("%.0f ms (%.0f connections/s, %d in parallel)",
        all / 1e6, n / (all / 1e9), args.size("connect-concurrency")));
    r.row("one connect (hello -> welcome)", Stats.ofNanosAsMillis(each).format("ms"));
    serverRows(r, cpu1 - cpu0);
    if (server != null) {
      r.row("server threads", Long.toString(server.threads()));
    }
    r.note("clients: " + driver.describeMassClients());
    closeAll(clients);
    return r;
  }

  // ---- W2 register ----

  private Result w2Register() throws Exception {
    int nClients = args.size("w2-clients");
    int perClient = args.size("w2-instances");
    int services = args.size("w2-services");
    int rounds = args.size("w2-rounds");
    int total = nClients * perClient;
    Result r = new Result("w2", String.format("W2 register: %d clients x %d instances over %d services",
        nClients, perClient, services));
    double[] rates = new double[rounds];
    for (int round = 1; round <= rounds; round++) {
      final int rd = round;
      List<BenchClient> clients = connectAll(nClients, i -> driver.client("w2-r" + rd + "-" + i));
      long[] before = new long[2];
      Burst burst = burst(clients, perClient, "w2-svc-", services, "10.2.", false, () -> {
        before[0] = cpu();
        before[1] = ownCpuMillis();
      });
      long cpu0 = before[0];
      long own0 = before[1];
      long elapsed = burst.elapsedNanos();
      List<Long> lat = burst.latencies();
      long cpu1 = cpu();
      long own1 = ownCpuMillis();
      rates[round - 1] = total / (elapsed / 1e9);
      r.row("round " + round + (round == 1 ? " (cold)" : ""),
          String.format("%,.0f registrations/s (%,d in %.0f ms); call %s; CPU per registration: %s",
              rates[round - 1], total, elapsed / 1e6, Stats.ofNanosAsMillis(lat).format("ms"),
              cpuPerOp(cpu1 - cpu0, own1 - own0, total)));
      closeAll(clients);
    }
    // Warm: the later half of the rounds, when both JVMs have compiled the path.
    double warm = Stats.of(java.util.Arrays.copyOfRange(rates, rounds / 2, rounds)).p50();
    r.row("registrations/s, cold (round 1)", String.format("%,.0f", rates[0]));
    r.row("registrations/s, warm (median of rounds " + (rounds / 2 + 1) + "-" + rounds + ")",
        String.format("%,.0f", warm), ">= 30,000 reg/s", warm >= 30_000);
    serverRows(r, -1);
    r.note("each client registers its instances one blocking call at a time (registerInstance), "
        + "all clients at once; clients connect before and close after the timed part");
    return r;
  }

  /** One burst of registrations: when its last call returned, how long it took, each call's time, the failed calls. */
  record Burst(long end, long elapsedNanos, List<Long> latencies, long failed) {}

  /**
   * Every client registers {@code perClient} instances, one blocking call at a time, all clients
   * at once, over {@code services} services named {@code servicePrefix} + number; client c's
   * instances are at {@code ipPrefix} + (c / 256) + "." + (c % 256), ports 20000 and up.
   * {@code atStart} runs just before the first call. A failed call (timed out, or refused while
   * there is no leader) is counted when {@code countFailures}, else it fails the burst.
   */
  static Burst burst(List<BenchClient> clients, int perClient, String servicePrefix, int services, String ipPrefix,
      boolean countFailures, Runnable atStart) throws Exception {
    int nClients = clients.size();
    List<Long> lat = Collections.synchronizedList(new ArrayList<>(nClients * perClient));
    AtomicLong failed = new AtomicLong();
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(nClients);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int c = 0; c < nClients; c++) {
        final int ci = c;
        done.add(pool.submit(() -> {
          start.await();
          BenchClient client = clients.get(ci);
          long[] mine = new long[perClient];
          for (int j = 0; j < perClient; j++) {
            String service = servicePrefix + ((ci * perClient + j) % services);
            long s = System.nanoTime();
            try {
              client.register(service, new Endpoint(ipPrefix + (ci / 256) + "." + (ci % 256), 20000 + j));
            } catch (RuntimeException e) {
              if (!countFailures) {
                throw e;
              }
              failed.incrementAndGet(); // the SDK keeps the change and applies it again on its next session
            }
            mine[j] = System.nanoTime() - s;
          }
          for (long v : mine) {
            lat.add(v);
          }
          return null;
        }));
      }
      atStart.run();
      long t0 = System.nanoTime();
      start.countDown();
      for (Future<?> f : done) {
        f.get();
      }
      long tEnd = System.nanoTime();
      return new Burst(tEnd, tEnd - t0, lat, failed.get());
    } finally {
      pool.shutdown();
    }
  }

  // ---- W3 query ----

  private Result w3Query() throws Exception {
    int services = args.size("w3-services");
    int perService = args.size("w3-instances");
    int callers = args.size("w3-callers");
    int nClients = args.size("w3-clients");
    int seconds = args.size("w3-seconds");
    Result r = new Result("w3", String.format("W3 query: %d services x %d instances, %d concurrent callers",
        services, perService, callers));
    // Setup: instance k of every service belongs to setup client k.
    List<BenchClient> owners = connectAll(perService, k -> driver.client("w3-owner-" + k));
    parallel(perService, k -> {
      for (int s = 0; s < services; s++) {
        owners.get(k).register("w3-svc-" + s, new Endpoint("10.3.0." + (k % 250 + 1), 30000 + k));
      }
    });
    List<BenchClient> clients = connectAll(nClients, i -> driver.client("w3-query-" + i));
    AtomicLong wrong = new AtomicLong();
    int warmupSeconds = args.size("w3-warmup-seconds");
    long start = System.nanoTime();
    long warmupEnd = start + warmupSeconds * 1_000_000_000L;
    long end = warmupEnd + seconds * 1_000_000_000L;
    long[][] samples = new long[callers][];
    int[] counts = new int[callers];
    AtomicLongArray perSecond = new AtomicLongArray(warmupSeconds + seconds + 1); // completions by second since start
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    List<Future<?>> done = new ArrayList<>();
    for (int c = 0; c < callers; c++) {
      final int ci = c;
      done.add(pool.submit(() -> {
        BenchClient client = clients.get(ci % nClients);
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        long[] lat = new long[1 << 16];
        int n = 0;
        while (true) {
          long s = System.nanoTime();
          if (s >= end) {
            break;
          }
          List<Endpoint> got = client.query("w3-svc-" + rnd.nextInt(services));
          long e = System.nanoTime();
          if (got.size() != perService) {
            wrong.incrementAndGet();
          }
          perSecond.incrementAndGet((int) Math.min(warmupSeconds + seconds, (e - start) / 1_000_000_000L));
          if (s >= warmupEnd) {
            if (n == lat.length) {
              lat = java.util.Arrays.copyOf(lat, n * 2);
            }
            lat[n++] = e - s;
          }
        }
        samples[ci] = lat;
        counts[ci] = n;
        return null;
      }));
    }
    parkUntil(warmupEnd);
    long cpu0 = cpu();
    long own0 = ownCpuMillis();
    for (Future<?> f : done) {
      f.get();
    }
    long cpu1 = cpu();
    long own1 = ownCpuMillis();
    pool.shutdown();
    long total = 0;
    for (int n : counts) {
      total += n;
    }
    double[] all = new double[(int) total];
    int k = 0;
    for (int c = 0; c < callers; c++) {
      for (int i = 0; i < counts[c]; i++) {
        all[k++] = samples[c][i] / 1e6;
      }
    }
    double qps = total / (double) seconds;
    r.row("queries/s", String.format("%,.0f (%,d in %d s after %d s of warm-up)", qps, total, seconds,
        warmupSeconds), ">= 30,000 q/s", qps >= 30_000);
    long cold = 0;
    int coldSeconds = Math.min(10, warmupSeconds);
    for (int i = 0; i < coldSeconds; i++) {
      cold += perSecond.get(i);
    }
    if (coldSeconds > 0) {
      r.row("queries/s, cold (first " + coldSeconds + " s after start, not measured)",
          String.format("%,.0f", cold / (double) coldSeconds));
    }
    r.row("query latency", Stats.of(all).format("ms"));
    r.row("CPU per query", cpuPerOp(cpu1 - cpu0, own1 - own0, total));
    StringBuilder timeline = new StringBuilder();
    for (int i = 0; i < warmupSeconds + seconds; i++) {
      timeline.append(i == 0 ? "" : i == warmupSeconds ? " | " : " ").append(String.format("%,d", perSecond.get(i)));
    }
    r.row("queries in each second (warm-up | measured)", timeline.toString());
    if (wrong.get() > 0) {
      r.row("answers with a wrong instance count", Long.toString(wrong.get()));
    }
    serverRows(r, server == null ? -1 : cpu1 - cpu0);
    r.note(callers + " threads share " + nClients + " clients; each query is a non-subscribing "
        + "getAllInstances of a random service (for Roster a query frame on the client's session stream, "
        + "Registry/QueryInstances when the server does not offer it)");
    closeAll(clients);
    closeAll(owners);
    return r;
  }

  // ---- W4 notify ----

  private Result w4Notify() throws Exception {
    int nSubs = args.size("w4-subscribers");
    int warmup = args.size("w4-warmup-changes");
    int changes = args.size("w4-changes");
    int total = warmup + changes;
    int interval = args.size("w4-interval-ms");
    Result r = new Result("w4", String.format("W4 notify: 1 provider, %d subscribers, %d changes every %d ms after %d of warm-up",
        nSubs, changes, interval, warmup));
    String service = "w4-svc";
    BenchClient provider = driver.client("w4-provider");
    List<BenchClient> subs = connectAll(nSubs, i -> driver.client("w4-sub-" + i));
    List<Tracker> trackers = new ArrayList<>();
    for (BenchClient s : subs) {
      Tracker t = new Tracker();
      trackers.add(t);
      s.subscribe(service, t::onList);
    }
    long[] callStart = new long[total];
    long[] callTime = new long[total];
    long cpu0 = 0;
    int floodThreads = args.size("w4-flood");
    BadCredentialFlood flood = null;
    long floodStart = 0;
    long next = System.nanoTime();
    for (int k = 0; k < total; k++) {
      if (k == warmup) {
        cpu0 = cpu();
        if (floodThreads > 0) {
          flood = new BadCredentialFlood(target, floodThreads, args.size("w4-flood-nice"));
          floodStart = System.nanoTime();
        }
      }
      parkUntil(next);
      next += interval * 1_000_000L;
      Endpoint e = new Endpoint("10.4.0.1", 40000 + k / 2);
      callStart[k] = System.nanoTime();
      if (k % 2 == 0) {
        provider.register(service, e);
      } else {
        provider.deregister(service, e);
      }
      callTime[k] = System.nanoTime() - callStart[k];
    }
    boolean complete = await(Duration.ofSeconds(30), () -> {
      for (Tracker t : trackers) {
        for (int k = 0; k < total; k++) {
          if (!(k % 2 == 0 ? t.seenAt : t.goneAt).containsKey(40000 + k / 2)) {
            return false;
          }
        }
      }
      return true;
    });
    long cpu1 = cpu();
    if (flood != null) {
      long attempts = flood.stop();
      flood.close();
      double seconds = (System.nanoTime() - floodStart) / 1e9;
      r.row("bad-credential flood meanwhile", String.format("%d threads from %s in a child JVM at nice %d: %d hellos "
          + "or connections with unknown tokens (%.0f/s)", floodThreads, BadCredentialFlood.FROM,
          args.size("w4-flood-nice"), attempts, attempts / seconds));
    }
    NotifyDelays delays = NotifyDelays.of(trackers, total, warmup, callStart);
    List<Long> cold = delays.cold();
    int missing = delays.missing();
    Stats st = Stats.ofNanosAsMillis(delays.warm());
    r.row("call -> listener", st.format("ms"), "p99 <= 25 ms", complete && st.p99() <= 25);
    if (!cold.isEmpty()) {
      r.row("cold: the " + warmup + " changes before (not measured), call -> listener",
          Stats.ofNanosAsMillis(cold).format("ms"));
    }
    List<Long> calls = new ArrayList<>();
    for (int k = warmup; k < total; k++) {
      calls.add(callTime[k]);
    }
    r.row("provider call (round trip)", Stats.ofNanosAsMillis(calls).format("ms"));
    if (missing > 0) {
      r.row("changes never seen (30 s)", Integer.toString(missing));
    }
    serverRows(r, cpu1 - cpu0);
    r.note("changes alternate register / deregister of a new port each cycle; latency is from just before "
        + "the provider's call to each subscriber's listener seeing the change");
    provider.close();
    closeAll(subs);
    return r;
  }

  // ---- W5 fan-out ----

  private Result w5FanOut() throws Exception {
    int nSubs = args.size("w5-subscribers");
    int warmup = args.size("w5-warmup-changes");
    int changes = args.size("w5-changes");
    Result r = new Result("w5", String.format("W5 fan-out: %d subscribers on one service, %d changes after %d of warm-up",
        nSubs, changes, warmup));
    String service = "w5-svc";
    BenchClient provider = driver.client("w5-provider");
    List<Tracker> trackers = new ArrayList<>();
    for (int i = 0; i < nSubs; i++) {
      trackers.add(new Tracker());
    }
    long c0 = System.nanoTime();
    List<BenchClient> subs = connectAll(nSubs, i -> {
      BenchClient c = driver.massClient("w5-sub-" + i);
      c.subscribe(service, trackers.get(i)::onList);
      return c;
    });
    long connectMs = (System.nanoTime() - c0) / 1_000_000;
    List<Long> toAll = new ArrayList<>();
    List<Long> each = new ArrayList<>();
    List<Long> coldToAll = new ArrayList<>();
    int missing = 0;
    long cpu0 = 0;
    long own0 = 0;
    for (int k = 0; k < warmup + changes; k++) {
      boolean measured = k >= warmup;
      if (k == warmup) {
        cpu0 = cpu();
        own0 = ownCpuMillis();
      }
      int port = 50000 + k / 2;
      boolean add = k % 2 == 0;
      Endpoint e = new Endpoint("10.5.0.1", port);
      long s = System.nanoTime();
      if (add) {
        provider.register(service, e);
      } else {
        provider.deregister(service, e);
      }
      await(Duration.ofSeconds(30), () -> {
        for (Tracker t : trackers) {
          if (!(add ? t.seenAt : t.goneAt).containsKey(port)) {
            return false;
          }
        }
        return true;
      });
      long last = 0;
      for (Tracker t : trackers) {
        Long at = (add ? t.seenAt : t.goneAt).get(port);
        if (at == null) {
          missing += measured ? 1 : 0;
        } else {
          if (measured) {
            each.add(at - s);
          }
          last = Math.max(last, at - s);
        }
      }
      (measured ? toAll : coldToAll).add(last);
      parkMillis(100);
    }
    long cpu1 = cpu();
    long own1 = ownCpuMillis();
    Stats all = Stats.ofNanosAsMillis(toAll);
    r.row("call -> last subscriber has it, per change", all.format("ms"), "p99 <= 100 ms",
        missing == 0 && all.p99() <= 100);
    r.row("call -> each subscriber's listener", Stats.ofNanosAsMillis(each).format("ms"));
    if (!coldToAll.isEmpty()) {
      r.row("cold: the " + warmup + " changes before (not measured), call -> last subscriber",
          Stats.ofNanosAsMillis(coldToAll).format("ms"));
    }
    r.row("CPU per delivery (one change to one subscriber, with its ack)",
        cpuPerOp(cpu1 - cpu0, own1 - own0, (long) changes * nSubs));
    if (missing > 0) {
      r.row("deliveries never seen (30 s)", Integer.toString(missing));
    }
    r.row("subscribers connected and subscribed in", connectMs + " ms");
    serverRows(r, cpu1 - cpu0);
    r.note("subscribers: " + driver.describeMassClients() + "; changes 100 ms apart after the previous one reached all");
    provider.close();
    closeAll(subs);
    return r;
  }

  // ---- W9 one change to a large service: full pushes, then delta pushes ----

  /**
   * One change at a time (an instance added, then removed) to a service of {@code w9-instances}
   * instances with {@code w9-subscribers} subscribers, first with subscribers that take only
   * full pushes (a hello without "delta", as before delta pushes), then with subscribers that
   * take deltas. Raw Connect streams that ack each push on arrival: this measures what the
   * server sends and when, not what a client then does with it.
   */
  private Result w9DeltaPushes() throws Exception {
    int size = args.size("w9-instances");
    int nSubs = args.size("w9-subscribers");
    int warmup = args.size("w9-warmup-changes");
    int changes = args.size("w9-changes");
    Result r = new Result("w9", String.format("W9 one change to a %,d-instance service with %d subscribers: "
        + "full pushes, then delta pushes (%d changes after %d of warm-up, each)", size, nSubs, changes, warmup));
    if (!args.driver.equals("roster")) {
      return r.note("Roster only: delta pushes are a Roster protocol feature");
    }
    String service = "w9-svc";
    java.util.concurrent.ScheduledExecutorService pinger = Executors.newSingleThreadScheduledExecutor();
    List<RawSession> all = new java.util.concurrent.CopyOnWriteArrayList<>();
    pinger.scheduleAtFixedRate(() -> all.forEach(RawSession::ping), 2, 2, java.util.concurrent.TimeUnit.SECONDS);
    try {
      int perProvider = 5000; // the per-connection instance limit
      for (int from = 0; from < size; from += perProvider) {
        RawSession p = RawSession.open(target, "w9-provider-" + from, false, (push, at) -> {});
        all.add(p);
        io.roster.proto.v1.BatchRegisterInstances.Builder b = io.roster.proto.v1.BatchRegisterInstances.newBuilder()
            .setService(io.roster.proto.v1.ServiceKey.newBuilder().setName(service));
        for (int i = from; i < Math.min(size, from + perProvider); i++) {
          b.addInstances(w9Instance("10." + (1 + i / 62500) + "." + (i / 250 % 250) + "." + (i % 250), 8080));
        }
        p.request(io.roster.proto.v1.ClientFrame.newBuilder().setBatchRegister(b));
      }
      RawSession changer = RawSession.open(target, "w9-changer", false, (push, at) -> {});
      all.add(changer);
      for (boolean deltas : new boolean[] {false, true}) {
        w9Phase(r, deltas, service, changer, nSubs, warmup, changes, all);
      }
    } finally {
      pinger.shutdownNow();
      for (RawSession s : all) {
        s.close();
      }
    }
    r.note("subscribers: raw Connect streams in the load generator, each acks a push on arrival; \"full\" ones say hello"
        + " without the \"delta\" feature (the behaviour before delta pushes), \"delta\" ones with it");
    r.note("instances carry 3 metadata entries (~" + w9Instance("10.1.0.0", 8080).getSerializedSize()
        + " bytes each on the wire); a change adds or removes one instance; changes 100 ms apart after the previous one reached all");
    return r;
  }

  private static io.roster.proto.v1.Instance w9Instance(String ip, int port) {
    return io.roster.proto.v1.Instance.newBuilder().setIp(ip).setPort(port)
        .putMetadata("zone", "eu-west-1a").putMetadata("version", "2.14.3").putMetadata("app", "orders-api").build();
  }

  /** One phase of W9: connects the subscribers, makes the changes, reports, disconnects them. */
  private void w9Phase(Result r, boolean deltas, String service, RawSession changer, int nSubs, int warmup,
      int changes, List<RawSession> all) throws Exception {
    String mode = deltas ? "delta" : "full";
    String marker = "10.250.0.1";
    // port -> per subscriber: arrival (ns) and bytes of the push that showed the change
    List<Map<Integer, long[]>> seen = new ArrayList<>();
    List<Map<Integer, long[]>> gone = new ArrayList<>();
    List<RawSession> subs = new ArrayList<>();
    long deltasSeen0 = 0;
    java.util.concurrent.atomic.AtomicLong deltaPushes = new java.util.concurrent.atomic.AtomicLong();
    for (int i = 0; i < nSubs; i++) {
      Map<Integer, long[]> s = new java.util.concurrent.ConcurrentHashMap<>();
      Map<Integer, long[]> g = new java.util.concurrent.ConcurrentHashMap<>();
      seen.add(s);
      gone.add(g);
      java.util.Set<Integer> present = java.util.concurrent.ConcurrentHashMap.newKeySet();
      RawSession sub = RawSession.open(target, "w9-" + mode + "-" + i, deltas, (push, at) -> {
        if (push.hasDelta()) {
          deltaPushes.incrementAndGet();
          for (io.roster.proto.v1.Instance x : push.getDelta().getUpsertedList()) {
            if (x.getIp().equals(marker) && present.add(x.getPort())) {
              s.putIfAbsent(x.getPort(), at);
            }
          }
          for (io.roster.proto.v1.InstanceIdentity x : push.getDelta().getRemovedList()) {
            if (x.getIp().equals(marker) && present.remove(x.getPort())) {
              g.putIfAbsent(x.getPort(), at);
            }
          }
          return;
        }
        java.util.Set<Integer> now = new java.util.HashSet<>();
        for (io.roster.proto.v1.Instance x : push.getServiceInfo().getInstancesList()) {
          if (x.getIp().equals(marker)) {
            now.add(x.getPort());
          }
        }
        for (Integer port : now) {
          if (present.add(port)) {
            s.putIfAbsent(port, at);
          }
        }
        for (Integer port : List.copyOf(present)) {
          if (!now.contains(port)) {
            present.remove(port);
            g.putIfAbsent(port, at);
          }
        }
      });
      all.add(sub);
      subs.add(sub);
      sub.request(io.roster.proto.v1.ClientFrame.newBuilder().setSubscribe(io.roster.proto.v1.Subscribe.newBuilder()
          .setService(io.roster.proto.v1.ServiceKey.newBuilder().setName(service))));
    }
    parkMillis(1000); // every first (full) push delivered and acked
    List<Long> each = new ArrayList<>();
    List<Long> toAll = new ArrayList<>();
    List<Long> bytes = new ArrayList<>();
    int missing = 0;
    long cpu0 = 0;
    long own0 = 0;
    int base = deltas ? 20000 : 10000;
    for (int k = 0; k < warmup + changes; k++) {
      boolean measured = k >= warmup;
      if (k == warmup) {
        cpu0 = cpu();
        own0 = ownCpuMillis();
        deltasSeen0 = deltaPushes.get();
      }
      int port = base + k / 2;
      boolean add = k % 2 == 0;
      List<Map<Integer, long[]>> where = add ? seen : gone;
      io.roster.proto.v1.Instance instance = w9Instance(marker, port);
      long t0 = System.nanoTime();
      if (add) {
        changer.request(io.roster.proto.v1.ClientFrame.newBuilder().setRegister(io.roster.proto.v1.RegisterInstance
            .newBuilder().setService(io.roster.proto.v1.ServiceKey.newBuilder().setName(service)).setInstance(instance)));
      } else {
        changer.request(io.roster.proto.v1.ClientFrame.newBuilder().setDeregister(io.roster.proto.v1.DeregisterInstance
            .newBuilder().setService(io.roster.proto.v1.ServiceKey.newBuilder().setName(service)).setInstance(instance)));
      }
      await(Duration.ofSeconds(30), () -> where.stream().allMatch(m -> m.containsKey(port)));
      long last = 0;
      for (Map<Integer, long[]> m : where) {
        long[] at = m.get(port);
        if (at == null) {
          missing += measured ? 1 : 0;
          continue;
        }
        last = Math.max(last, at[0] - t0);
        if (measured) {
          each.add(at[0] - t0);
          bytes.add(at[1]);
        }
      }
      if (measured) {
        toAll.add(last);
      }
      parkMillis(100);
    }
    long cpu1 = cpu();
    long own1 = ownCpuMillis();
    Stats e = Stats.ofNanosAsMillis(each);
    double meanBytes = bytes.stream().mapToLong(Long::longValue).average().orElse(0);
    r.row(mode + ": bytes per push (the push that carried the change)", String.format("%,.0f bytes (mean of %d)", meanBytes,
        bytes.size()));
    r.row(mode + ": change -> each subscriber", e.format("ms"));
    r.row(mode + ": change -> last subscriber, per change", Stats.ofNanosAsMillis(toAll).format("ms"));
    r.row(mode + ": CPU per change (all subscribers)", cpuPerOp(cpu1 - cpu0, own1 - own0, changes));
    if (deltas) {
      r.row(mode + ": pushes sent as deltas (measured phase)", (deltaPushes.get() - deltasSeen0) + " of "
          + (long) changes * nSubs);
    }
    if (missing > 0) {
      r.row(mode + ": deliveries never seen (30 s)", Integer.toString(missing));
    }
    for (RawSession sub : subs) {
      all.remove(sub);
      sub.close();
    }
  }

  // ---- W6 crash, W7 silent ----

  private Result w6Crash() throws Exception {
    int trials = args.size("w6-trials");
    Result r = new Result("w6", "W6 crash: provider JVM registered, then kill -9; until a subscriber sees it gone ("
        + trials + " trials)");
    Stats st = providerLoss(trials, false, r);
    r.row("kill -9 -> subscriber sees it gone", st.format("ms"), "p99 <= 50 ms", st.n() == trials && st.p99() <= 50);
    return r;
  }

  private Result w7Silent() throws Exception {
    int trials = args.size("w7-trials");
    Result r = new Result("w7", "W7 silent: provider JVM frozen with SIGSTOP; until removal (" + trials + " trials)");
    Stats st = providerLoss(trials, true, r);
    r.row("SIGSTOP -> subscriber sees it gone", st.format("ms"), "<= 10 s (max)", st.n() == trials && st.max() <= 10_000);
    return r;
  }

  private Stats providerLoss(int trials, boolean freeze, Result r) throws Exception {
    String service = freeze ? "w7-svc" : "w6-svc";
    BenchClient sub = driver.client(service + "-subscriber");
    Tracker t = new Tracker();
    sub.subscribe(service, t::onList);
    List<Long> lat = new ArrayList<>();
    long cpu0 = cpu();
    for (int trial = 0; trial < trials; trial++) {
      int port = (freeze ? 47000 : 46000) + trial;
      try (ChildProvider p = new ChildProvider(driver.name(), target, service, "10.6.0.1", port)) {
        p.awaitRegistered(60);
        if (!await(Duration.ofSeconds(30), () -> t.seenAt.containsKey(port))) {
          r.note("trial " + trial + ": the subscriber never saw the provider");
          continue;
        }
        long s = System.nanoTime();
        if (freeze) {
          p.freeze();
        } else {
          p.kill9();
        }
        if (await(Duration.ofSeconds(90), () -> t.goneAt.containsKey(port))) {
          lat.add(t.goneAt.get(port) - s);
        } else {
          r.note("trial " + trial + ": still there 90 s after the " + (freeze ? "freeze" : "kill"));
        }
      }
    }
    long cpu1 = cpu();
    serverRows(r, cpu1 - cpu0);
    r.note("provider: a child JVM (" + String.join(" ", ChildProvider.JVM_FLAGS) + ") with a full "
        + driver.name() + " client; its start-up is not timed");
    sub.close();
    return Stats.ofNanosAsMillis(lat);
  }

  // ---- W8 memory ----

  private Result w8Memory() throws Exception {
    int n = args.size("w8-clients");
    int services = args.size("w8-services");
    Result r = new Result("w8", String.format("W8 memory: %,d clients, each 1 instance + 1 subscription (%d services)",
        n, services));
    long heap0 = server == null ? 0 : server.heapAfterGcBytes();
    long rss0 = server == null ? 0 : server.rssBytes();
    Map<String, Long> nmt0 = server == null ? Map.of() : server.nativeMemoryKib();
    long cpu0 = cpu();
    long t0 = System.nanoTime();
    List<BenchClient> clients = connectAll(n, i -> {
      BenchClient c = driver.massClient("w8-" + i);
      c.register("w8-svc-" + (i % services), new Endpoint("10.8." + (i / 250) + "." + (i % 250 + 1), 8080));
      c.subscribe("w8-svc-" + ((i + 1) % services), l -> { });
      return c;
    });
    long setup = System.nanoTime() - t0;
    long cpu1 = cpu();
    r.row("clients connected, registered and subscribed in", String.format("%.1f s", setup / 1e9));
    if (server != null) {
      long heap1 = server.heapAfterGcBytes();
      long rss1 = server.rssBytes();
      double perHeap = (heap1 - heap0) / (double) n;
      double perRss = (rss1 - rss0) / (double) n;
      r.row("server heap after full GC", String.format("%.1f MiB (idle %.1f MiB)", heap1 / MIB, heap0 / MIB));
      r.row("server RSS", String.format("%.1f MiB (idle %.1f MiB)", rss1 / MIB, rss0 / MIB));
      r.row("heap per connection", String.format("%,.0f bytes", perHeap), "<= 20 KB", perHeap <= 20_000);
      r.row("RSS per connection", String.format("%,.0f bytes", perRss), "<= 20 KB", perRss <= 20_000);
      Map<String, Long> nmt1 = server.nativeMemoryKib();
      if (!nmt1.isEmpty()) { // the server runs with -XX:NativeMemoryTracking=summary
        StringBuilder grew = new StringBuilder();
        for (Map.Entry<String, Long> e : nmt1.entrySet()) {
          long bytes = (e.getValue() - nmt0.getOrDefault(e.getKey(), 0L)) * 1024 / n;
          if (Math.abs(bytes) >= 100) {
            grew.append(grew.length() == 0 ? "" : ", ").append(e.getKey()).append(' ').append(String.format("%,d", bytes));
          }
        }
        r.row("committed memory growth per connection by NMT category, bytes", grew.toString());
      }
      r.row("server threads", Long.toString(server.threads()));
      serverRows(r, cpu1 - cpu0);
    } else {
      r.note("server not local: heap and RSS not measured");
    }
    r.note("clients: " + driver.describeMassClients() + "; client i registers in service i mod "
        + services + " and subscribes to service (i+1) mod " + services);
    closeAll(clients);
    return r;
  }

  // ---- helpers ----

  private void serverRows(Result r, long cpuMillis) {
    if (server == null) {
      return;
    }
    if (cpuMillis >= 0) {
      r.row("server CPU (measured phase)", String.format("%.2f s", cpuMillis / 1000.0));
    }
    r.row("server RSS at end", String.format("%.0f MiB", server.rssBytes() / MIB));
  }

  private long cpu() {
    return server == null ? 0 : server.cpuMillis();
  }

  /** CPU time of this load generator process (every thread), in milliseconds. */
  static long ownCpuMillis() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime() / 1_000_000;
  }

  /** "server 31 µs + load generator 62 µs": CPU per operation of the measured phase. */
  private String cpuPerOp(long serverCpuMillis, long ownCpuMillis, long ops) {
    String own = String.format("load generator %.0f µs", ownCpuMillis * 1000.0 / ops);
    return server == null ? own : String.format("server %.0f µs + %s", serverCpuMillis * 1000.0 / ops, own);
  }

  private List<BenchClient> connectAll(int n, IntFunction<BenchClient> make) throws Exception {
    BenchClient[] out = new BenchClient[n];
    try {
      parallel(n, i -> out[i] = make.apply(i));
    } catch (Exception e) {
      closeAll(java.util.Arrays.stream(out).filter(c -> c != null).toList());
      throw e;
    }
    return java.util.Arrays.asList(out);
  }

  private void closeAll(List<BenchClient> clients) throws Exception {
    parallel(clients.size(), i -> clients.get(i).close());
  }

  /** Runs task(0..n-1) on connect-concurrency threads; rethrows the first failure. */
  private void parallel(int n, IntTask task) throws Exception {
    parallel(n, args.size("connect-concurrency"), task);
  }

  /** Runs task(0..n-1) on up to {@code threads} threads; rethrows the first failure. */
  static void parallel(int n, int maxThreads, IntTask task) throws Exception {
    int threads = Math.max(1, Math.min(n, maxThreads));
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      AtomicLong next = new AtomicLong();
      List<Future<?>> fs = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        fs.add(pool.submit(() -> {
          for (long i; (i = next.getAndIncrement()) < n; ) {
            task.run((int) i);
          }
          return null;
        }));
      }
      for (Future<?> f : fs) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @FunctionalInterface
  interface IntTask {
    void run(int i) throws Exception;
  }

  /** Polls {@code condition} every millisecond until true or {@code atMost}; returns the last value. */
  static boolean await(Duration atMost, BooleanSupplier condition) {
    long deadline = System.nanoTime() + atMost.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      parkMillis(1);
    }
    return true;
  }

  static void parkMillis(long ms) {
    parkUntil(System.nanoTime() + ms * 1_000_000);
  }

  static void parkUntil(long nanoTime) {
    long left;
    while ((left = nanoTime - System.nanoTime()) > 0) {
      LockSupport.parkNanos(left);
    }
  }

  /**
   * Each tracker's delay from the k-th provider call (registers of port 40000 + k/2 for even k,
   * deregisters for odd k) to its listener showing it; the first {@code warmup} calls apart as
   * cold, and the changes a tracker never saw counted.
   */
  record NotifyDelays(List<Long> warm, List<Long> cold, int missing) {
    static NotifyDelays of(List<Tracker> trackers, int total, int warmup, long[] callStart) {
      List<Long> warm = new ArrayList<>();
      List<Long> cold = new ArrayList<>();
      int missing = 0;
      for (Tracker t : trackers) {
        for (int k = 0; k < total; k++) {
          Long at = (k % 2 == 0 ? t.seenAt : t.goneAt).get(40000 + k / 2);
          if (at == null) {
            missing++;
          } else {
            (k < warmup ? cold : warm).add(at - callStart[k]);
          }
        }
      }
      return new NotifyDelays(warm, cold, missing);
    }
  }
}
