package io.roster.bench;

import io.roster.bench.driver.BenchClient;
import io.roster.bench.driver.Endpoint;
import io.roster.bench.driver.RosterDriver;
import io.roster.proto.v1.GetServiceRequest;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.server.testing.process.LocalCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The cluster workloads W10-W12: each starts its own three-member
 * {@link LocalCluster}, drives it with Roster SDK clients whose server list starts with the
 * member they should use, and reports per member the idle RSS after start, the RSS after the
 * load, the largest GC pause of the run and the CPU time of the measured phase, plus the load
 * average (the three servers and the load generator share the machine's cores).
 *
 * <p>Roster only: the nacos driver does not run them. Not thread-safe; one instance per workload.
 */
final class ClusterWorkloads {

  private static final double MIB = 1024 * 1024;
  private static final int SIZE = 3;

  private final Args args;
  private final LocalCluster cluster;
  private final RosterDriver[] drivers = new RosterDriver[SIZE];
  private final long[] cpu0 = new long[SIZE];
  private final long[] cpuSum = new long[SIZE];
  private final List<RosterDriver> extraDrivers = new ArrayList<>();
  private final long[] rssAfter = new long[SIZE];
  private final long[] rssSettled = new long[SIZE];
  private int settleSeconds;
  private String loadAverage = "?";

  private ClusterWorkloads(Args args, LocalCluster cluster) {
    this.args = args;
    this.cluster = cluster;
    for (int i = 0; i < SIZE; i++) {
      // Each client's server list starts with the member it should use, then the others.
      drivers[i] = new RosterDriver(cluster.servers(i), RosterDriver.MassMode.SDK);
    }
  }

  /** Starts a cluster, runs workload {@code id} on it, reports, stops the cluster. */
  static Result run(Args args, Path jar, Path logDir, String id) throws Exception {
    Result r = new Result(id, title(id, args));
    try (LocalCluster c = LocalCluster.builder(LocalServer.launcher(jar, args.serverJvm, logDir)).size(SIZE)
        .peerTls(args.peerTls).logName(id).gcLogs().startTimeout(Duration.ofSeconds(90)).start()) {
      Workloads.parkMillis(args.size("cluster-idle-seconds") * 1000L); // idle: no client at all
      long[] idle = new long[SIZE];
      for (int i = 0; i < SIZE; i++) {
        idle[i] = c.node(i).rssKib() * 1024;
      }
      ClusterWorkloads w = new ClusterWorkloads(args, c);
      try {
        switch (id) {
          case "w10" -> w.w10Notify(r);
          case "w11" -> w.w11Kill(r);
          case "w12" -> w.w12Register(r);
          default -> throw new IllegalArgumentException(id);
        }
      } finally {
        w.close();
      }
      w.settle(args.size("cluster-settle-seconds"));
      w.nodeRows(r, idle);
      r.note("three members on 127.0.0.1-3 with free ports and temporary data dirs, default cluster flags "
          + "(--group-commit-window 1ms, --member-down-after 3s, --member-grace 10s), peer ports "
          + (args.peerTls ? "with mutual TLS (a throwaway CA)" : "in plaintext (--peer-tls off)")
          + "; each with -Xlog:gc to a file; "
          + "the load generator and the three servers share the machine's " + Runtime.getRuntime().availableProcessors()
          + " cores");
    }
    return r;
  }

  private static String title(String id, Args a) {
    return switch (id) {
      case "w10" -> String.format("W10 cross-node notify (issue's W9): provider on node 1, %d subscribers on node 3, "
          + "%d changes every %d ms after %d rounds of W12's burst and %d changes of warm-up", a.size("w10-subscribers"),
          a.size("w10-changes"), a.size("w10-interval-ms"), a.size("w10-warmup-rounds"), a.size("w10-warmup-changes"));
      case "w11" -> String.format("W11 node kill (issue's W10): %d clients over 3 nodes, kill -9 of the Raft leader "
          + "(as found when setup begins)",
          a.size("w11-clients"));
      case "w12" -> String.format("W12 cluster register (issue's W11): %d clients split over 3 nodes x %d instances "
          + "over %d services", a.size("w12-clients"), a.size("w12-instances"), a.size("w12-services"));
      default -> id;
    };
  }

  // ---- W10 cross-node notify ----

  private void w10Notify(Result r) throws Exception {
    int nSubs = args.size("w10-subscribers");
    int warmup = args.size("w10-warmup-changes");
    int changes = args.size("w10-changes");
    int total = warmup + changes;
    int interval = args.size("w10-interval-ms");
    String service = "w10-svc";
    warmUp(r, args.size("w10-warmup-rounds"));
    List<BenchClient> all = new ArrayList<>();
    try {
      BenchClient provider = drivers[0].client("w10-provider");
      all.add(provider);
      List<BenchClient> subs = connectAll(nSubs, i -> drivers[2].client("w10-sub-" + i));
      all.addAll(subs);
      List<Tracker> trackers = new ArrayList<>();
      for (BenchClient s : subs) {
        Tracker t = new Tracker();
        trackers.add(t);
        s.subscribe(service, t::onList);
      }
      long[] callStart = new long[total];
      long[] callTime = new long[total];
      int failedCalls = 0;
      long next = System.nanoTime();
      for (int k = 0; k < total; k++) {
        if (k == warmup) {
          startMeasuring();
        }
        Workloads.parkUntil(next);
        next += interval * 1_000_000L;
        Endpoint e = new Endpoint("10.10.0.1", 40000 + k / 2);
        callStart[k] = System.nanoTime();
        try {
          if (k % 2 == 0) {
            provider.register(service, e);
          } else {
            provider.deregister(service, e);
          }
        } catch (RuntimeException ex) {
          failedCalls++; // refused (no leader) or timed out; the SDK keeps the change and applies it again
        }
        callTime[k] = System.nanoTime() - callStart[k];
      }
      boolean complete = Workloads.await(Duration.ofSeconds(30), () -> {
        for (Tracker t : trackers) {
          for (int k = 0; k < total; k++) {
            if (!(k % 2 == 0 ? t.seenAt : t.goneAt).containsKey(40000 + k / 2)) {
              return false;
            }
          }
        }
        return true;
      });
      stopMeasuring();
      Workloads.NotifyDelays delays = Workloads.NotifyDelays.of(trackers, total, warmup, callStart);
      List<Long> cold = delays.cold();
      int missing = delays.missing();
      Stats st = Stats.ofNanosAsMillis(delays.warm());
      r.row("change on node 1 -> each subscriber on node 3", st.format("ms"), "p50 <= 10 ms, p99 <= 50 ms",
          complete && st.p50() <= 10 && st.p99() <= 50);
      r.row("the " + warmup + " changes before (not measured)", Stats.ofNanosAsMillis(cold).format("ms"));
      List<Long> calls = new ArrayList<>();
      for (int k = warmup; k < total; k++) {
        calls.add(callTime[k]);
      }
      r.row("provider call on node 1 (round trip: committed in the log)", Stats.ofNanosAsMillis(calls).format("ms"));
      if (missing > 0) {
        r.row("changes never seen (30 s)", Integer.toString(missing));
      }
      if (failedCalls > 0) {
        r.row("provider calls that failed (refused or timed out)", Integer.toString(failedCalls));
      }
      r.note("changes alternate register / deregister of a new port; latency from just before the provider's call "
          + "(SDK on node 1) to each subscriber's listener (SDK on node 3)");
    } finally {
      closeAll(all);
    }
  }

  /**
   * Rounds of W12's burst (its clients, instances and services; each round's clients leave
   * after it) before a latency workload, so that what it measures is a cluster whose JIT has
   * compiled the log's path: three members on two shared cores need ~10 such rounds (about a
   * minute) to get there, and a cluster serving real traffic is past that point.
   */
  private void warmUp(Result r, int rounds) throws Exception {
    if (rounds == 0) {
      return;
    }
    int nClients = args.size("w12-clients");
    int perClient = args.size("w12-instances");
    long t0 = System.nanoTime();
    double last = 0;
    for (int round = 1; round <= rounds; round++) {
      final int rd = round;
      List<BenchClient> clients = connectAll(nClients, i -> drivers[i % SIZE].client("warm-r" + rd + "-" + i));
      try {
        Workloads.Burst b = Workloads.burst(clients, perClient, "warm-r" + rd + "-svc-", args.size("w12-services"),
            "10.12.", true, () -> { });
        last = nClients * perClient / (b.elapsedNanos() / 1e9);
      } finally {
        closeAll(clients);
      }
    }
    r.row("warm-up: " + rounds + (rounds == 1 ? " round" : " rounds") + " of W12's burst (not measured)", String.format(
        "%,d registrations in %.1f s; the last round at %,.0f/s", rounds * nClients * perClient,
        (System.nanoTime() - t0) / 1e9, last));
  }

  // ---- W11 node kill ----

  private void w11Kill(Result r) throws Exception {
    int nClients = args.size("w11-clients");
    int services = args.size("w11-services");
    int nDoomed = args.size("w11-doomed");
    int subsPerNode = args.size("w11-subscribers");
    int leader = cluster.leader();
    int victim = leader >= 0 ? leader : 0;
    List<Integer> survivors = new ArrayList<>();
    for (int i = 0; i < SIZE; i++) {
      if (i != victim) {
        survivors.add(i);
      }
    }
    List<BenchClient> all = new ArrayList<>();
    List<ChildProvider> doomed = new ArrayList<>();
    AtomicBoolean stopWriter = new AtomicBoolean();
    Thread writerThread = null;
    try {
      // Live clients: client i starts on node i mod 3 (with every node in its list) and owns port 10000+i.
      List<BenchClient> clients = connectAll(nClients, i -> {
        BenchClient c = drivers[i % SIZE].client("w11-client-" + i);
        retry(Duration.ofSeconds(60), () -> c.register("w11-svc-" + (i % services),
            new Endpoint("10.11." + (i / 250) + "." + (i % 250 + 1), 10000 + i)));
        return c;
      });
      all.addAll(clients);
      Set<String> movers = new HashSet<>();
      for (int i = victim; i < nClients; i += SIZE) {
        movers.add("w11-client-" + i);
      }
      // Providers that die with the node: child JVMs connected to it alone, port 30000+j.
      for (int j = 0; j < nDoomed; j++) {
        doomed.add(new ChildProvider("roster", cluster.node(victim).address(), "w11-svc-" + (j % services),
            "10.11.200." + (j + 1), 30000 + j));
      }
      for (ChildProvider p : doomed) {
        p.awaitRegistered(120);
      }
      // Subscribers on the surviving nodes (each knows only its node), every service.
      List<Tracker> trackers = new ArrayList<>();
      List<Set<Integer>> expected = new ArrayList<>();
      for (int s : survivors) {
        for (int k = 0; k < subsPerNode; k++) {
          RosterDriver only = new RosterDriver(cluster.node(s).address(), RosterDriver.MassMode.SDK);
          extraDrivers.add(only);
          BenchClient sub = only.client("w11-sub-" + s + "-" + k);
          all.add(sub);
          for (int svc = 0; svc < services; svc++) {
            Tracker t = new Tracker();
            Set<Integer> ports = new HashSet<>();
            for (int i = svc; i < nClients; i += services) {
              ports.add(10000 + i);
            }
            for (int j = svc; j < nDoomed; j += services) {
              ports.add(30000 + j);
            }
            trackers.add(t);
            expected.add(ports);
            sub.subscribe("w11-svc-" + svc, t::onList);
          }
        }
      }
      java.util.function.BooleanSupplier allSeen = () -> {
        for (int k = 0; k < trackers.size(); k++) {
          if (!trackers.get(k).seenAt.keySet().containsAll(expected.get(k))) {
            return false;
          }
        }
        return true;
      };
      int registeredAgain = 0;
      if (!Workloads.await(Duration.ofSeconds(30), allSeen)) {
        // A registration can be lost during setup when the SDK's redo after a move is refused
        // ("cannot take writes") and not retried: register those again, as the application would.
        Set<Integer> seenEverywhere = new HashSet<>();
        for (int i = 0; i < nClients; i++) {
          int port = 10000 + i;
          boolean everywhere = true;
          for (int k = 0; k < trackers.size(); k++) {
            if (expected.get(k).contains(port) && !trackers.get(k).seenAt.containsKey(port)) {
              everywhere = false;
            }
          }
          if (everywhere) {
            seenEverywhere.add(port);
          }
        }
        for (int i = 0; i < nClients; i++) {
          if (!seenEverywhere.contains(10000 + i)) {
            final int ci = i;
            registeredAgain++;
            retry(Duration.ofSeconds(60), () -> clients.get(ci).register("w11-svc-" + (ci % services),
                new Endpoint("10.11." + (ci / 250) + "." + (ci % 250 + 1), 10000 + ci)));
          }
        }
        if (!Workloads.await(Duration.ofSeconds(60), allSeen)) {
          throw new IllegalStateException("W11: subscribers did not see every instance within 90 s (" + registeredAgain
              + " registered again after 30 s)");
        }
      }
      if (registeredAgain > 0) {
        r.row("setup: live clients' instances registered again (lost during setup)", Integer.toString(registeredAgain));
      }
      // A writer on a surviving node (that node only), registering a new port every ~2 ms.
      RosterDriver writerDriver = new RosterDriver(cluster.node(survivors.get(0)).address(), RosterDriver.MassMode.SDK);
      extraDrivers.add(writerDriver);
      BenchClient writer = writerDriver.client("w11-writer");
      all.add(writer);
      List<long[]> writes = Collections.synchronizedList(new ArrayList<>());
      writerThread = new Thread(() -> {
        int port = 50000;
        while (!stopWriter.get()) {
          long s = System.nanoTime();
          try {
            writer.register("w11-writes", new Endpoint("10.11.250.1", port++ % 65000));
            writes.add(new long[] {s, System.nanoTime()});
          } catch (RuntimeException e) {
            // refused while there is no leader; the next call tries again
          }
          Workloads.parkMillis(2);
        }
      }, "w11-writer");
      writerThread.start();
      Workloads.await(Duration.ofSeconds(10), () -> writes.size() >= 20);

      int leaderAtKill = cluster.leader(); // leadership may have moved during setup
      startMeasuring();
      long t0 = System.nanoTime();
      cluster.node(victim).kill9();
      // The providers die with the node: killed after it, so that it never sees them go.
      for (ChildProvider p : doomed) {
        p.kill9();
      }

      // Re-homing: every mover has a session on a survivor.
      long rehomed = -1;
      long deadline = t0 + TimeUnit.SECONDS.toNanos(60);
      while (System.nanoTime() < deadline) {
        Set<String> seen = new HashSet<>();
        for (int s : survivors) {
          seen.addAll(cluster.clientIds(s));
        }
        if (seen.containsAll(movers)) {
          rehomed = System.nanoTime() - t0;
          break;
        }
        Workloads.parkMillis(10);
      }
      // Writes through a survivor: the first register that started after the kill and succeeded.
      Workloads.await(Duration.ofSeconds(30), () -> writes.stream().anyMatch(w -> w[0] >= t0));
      long gap = writes.stream().filter(w -> w[0] >= t0).mapToLong(w -> w[1] - t0).min().orElse(-1);
      // Instances of providers that died with the node: gone for every subscriber.
      List<Long> gone = new ArrayList<>();
      boolean allGone = Workloads.await(Duration.ofSeconds(90), () -> {
        for (int k = 0; k < trackers.size(); k++) {
          for (int port : expected.get(k)) {
            if (port >= 30000 && !trackers.get(k).goneAt.containsKey(port)) {
              return false;
            }
          }
        }
        return true;
      });
      for (int k = 0; k < trackers.size(); k++) {
        for (int port : expected.get(k)) {
          Long at = trackers.get(k).goneAt.get(port);
          if (port >= 30000 && at != null) {
            gone.add(at - t0);
          }
        }
      }
      stopMeasuring();
      stopWriter.set(true);
      writerThread.join(10_000);
      int flaps = 0;
      for (int k = 0; k < trackers.size(); k++) {
        for (int port : expected.get(k)) {
          if (port < 30000 && trackers.get(k).goneAt.containsKey(port)) {
            flaps++;
          }
        }
      }
      r.row("killed node", "node " + (victim + 1) + (leader >= 0 ? ", the Raft leader when setup began" : "")
          + "; leader just before the kill (the member whose Ratis group info says LEADER): "
          + (leaderAtKill >= 0 ? "node " + (leaderAtKill + 1) : "unknown"));
      r.row("kill -9 -> all " + movers.size() + " live clients of the node have a session on a survivor",
          rehomed < 0 ? "not within 60 s" : String.format("%.0f ms", rehomed / 1e6),
          "(ListConnections on the survivors, polled every ~10 ms)", rehomed >= 0);
      r.row("flaps: instances of live clients missing from a push on the survivors", Integer.toString(flaps),
          "0", flaps == 0);
      r.row("kill -9 -> next successful register through a survivor",
          gap < 0 ? "none within 30 s" : String.format("%.0f ms", gap / 1e6), "<= 1000 ms", gap >= 0 && gap <= 1e9);
      Stats g = Stats.ofNanosAsMillis(gone);
      r.row("kill -9 -> instances of the " + nDoomed + " providers that died with it gone, per subscriber",
          g.format("ms") + (allGone ? "" : " (some still there after 90 s)"),
          "~ member-down-after + member-grace = 13 s", allGone);
      r.note("live clients: SDK clients, client i starting on node (i mod 3) + 1 with all three nodes in its list, "
          + "one instance each over " + services + " services; " + subsPerNode
          + " subscriber(s) per surviving node (that node only) subscribed to every service; " + nDoomed
          + " provider child JVM(s) on the killed node only, killed -9 right after it; a writer on node "
          + (survivors.get(0) + 1) + " registers a new port every ~2 ms throughout");
    } finally {
      stopWriter.set(true);
      if (writerThread != null) {
        writerThread.join(10_000);
      }
      for (ChildProvider p : doomed) {
        p.close();
      }
      closeAll(all);
    }
  }

  // ---- W12 cluster register ----

  private void w12Register(Result r) throws Exception {
    int nClients = args.size("w12-clients");
    int perClient = args.size("w12-instances");
    int services = args.size("w12-services");
    int rounds = args.size("w12-rounds");
    int total = nClients * perClient;
    double[] rates = new double[rounds];
    List<Long> converge = new ArrayList<>();
    List<Long> sentinel = new ArrayList<>();
    for (int round = 1; round <= rounds; round++) {
      final int rd = round;
      String prefix = "w12-r" + rd + "-svc-";
      List<BenchClient> clients = connectAll(nClients, i -> drivers[i % SIZE].client("w12-r" + rd + "-" + i));
      try {
        long[] own0 = new long[1];
        Workloads.Burst burst = Workloads.burst(clients, perClient, prefix, services, "10.12.", true, () -> {
          startMeasuring();
          own0[0] = Workloads.ownCpuMillis();
        });
        long own1 = Workloads.ownCpuMillis();
        stopMeasuring();
        long tEnd = burst.end();
        long elapsed = burst.elapsedNanos();
        List<Long> lat = burst.latencies();
        rates[round - 1] = total / (elapsed / 1e9);
        long serverCpu = 0;
        for (int i = 0; i < SIZE; i++) {
          serverCpu += cluster.node(i).cpuMillis() - cpu0[i];
        }
        // Every node holds every registration: per node, GetService on every service of the round
        // until the instance counts add up (in parallel for the three nodes).
        int[] expected = new int[services];
        for (int c = 0; c < nClients; c++) {
          for (int j = 0; j < perClient; j++) {
            expected[(c * perClient + j) % services]++;
          }
        }
        long[] held = new long[SIZE];
        parallel(SIZE, SIZE, n -> held[n] = awaitCounts(n, prefix, expected, tEnd));
        long all = 0;
        for (long h : held) {
          all = all < 0 || h < 0 ? -1 : Math.max(all, h);
        }
        converge.add(all);
        // A sentinel registered after the last call returned: once a node applied it, it applied
        // every earlier entry of the log.
        long s0 = System.nanoTime();
        retry(Duration.ofSeconds(60), () -> clients.get(0).register("w12-r" + rd + "-sentinel",
            new Endpoint("10.12.255.1", 1)));
        long[] sent = new long[SIZE];
        parallel(SIZE, SIZE, n -> sent[n] = awaitSentinel(n, "w12-r" + rd + "-sentinel", s0));
        long sentAll = 0;
        for (long v : sent) {
          sentAll = sentAll < 0 || v < 0 ? -1 : Math.max(sentAll, v);
        }
        sentinel.add(sentAll);
        r.row("round " + round + (round == 1 ? " (cold)" : ""),
            String.format("%,.0f registrations/s (%,d in %.0f ms); call %s; CPU per registration: servers %.0f µs "
                    + "(sum of 3) + load generator %.0f µs; every node holds all %s after the last call",
                rates[round - 1], total, elapsed / 1e6, Stats.ofNanosAsMillis(lat).format("ms"),
                serverCpu * 1000.0 / total, (own1 - own0[0]) * 1000.0 / total,
                all < 0 ? "NOT within 60 s" : String.format("%.0f ms", all / 1e6))
                + (burst.failed() > 0 ? String.format("; %,d calls failed (timeout or no leader)", burst.failed()) : ""));
      } finally {
        closeAll(clients);
      }
    }
    double warm = Stats.of(java.util.Arrays.copyOfRange(rates, rounds / 2, rounds)).p50();
    r.row("registrations/s, cold (round 1)", String.format("%,.0f", rates[0]));
    r.row("registrations/s, warm (median of rounds " + (rounds / 2 + 1) + "-" + rounds + ")",
        String.format("%,.0f", warm), ">= 10,000 reg/s", warm >= 10_000);
    r.row("last call -> every node holds every registration (GetService poll over all services of the round)",
        Stats.ofNanosAsMillis(converge.stream().filter(v -> v >= 0).toList()).format("ms")
            + (converge.contains(-1L) ? "; some round did not converge within 60 s" : ""));
    r.row("sentinel register -> seen by QueryInstances on every node", Stats.ofNanosAsMillis(
        sentinel.stream().filter(v -> v >= 0).toList()).format("ms"));
    r.note("client i uses node (i mod 3) + 1 (all three in its server list); each registers its instances one blocking "
        + "call at a time, all clients at once; every round has fresh clients and its own services; the convergence "
        + "time includes one pass of GetService over the round's services on each node (3 pollers at once), so it is "
        + "an upper bound; the sentinel row is the log's own order: a register made after the last call returned, "
        + "seen on every node");
  }

  /** Nanoseconds from {@code from} until member {@code n} counts every instance of the round; -1 after 60 s. */
  private long awaitCounts(int n, String prefix, int[] expected, long from) {
    RegistryGrpc.RegistryBlockingStub reg = RegistryGrpc.newBlockingStub(cluster.channel(n));
    List<Integer> pending = new ArrayList<>();
    for (int s = 0; s < expected.length; s++) {
      pending.add(s);
    }
    long deadline = from + TimeUnit.SECONDS.toNanos(60);
    while (!pending.isEmpty() && System.nanoTime() < deadline) {
      pending.removeIf(s -> {
        try {
          return reg.withDeadlineAfter(5, TimeUnit.SECONDS).getService(GetServiceRequest.newBuilder()
              .setService(ServiceKey.newBuilder().setName(prefix + s)).build()).getInstanceCount() == expected[s];
        } catch (RuntimeException e) {
          return false; // NOT_FOUND until its first instance arrives
        }
      });
    }
    return pending.isEmpty() ? System.nanoTime() - from : -1;
  }

  /** Nanoseconds from {@code from} until member {@code n} answers a query with the sentinel; -1 after 60 s. */
  private long awaitSentinel(int n, String service, long from) {
    RegistryGrpc.RegistryBlockingStub reg = RegistryGrpc.newBlockingStub(cluster.channel(n));
    long deadline = from + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      try {
        if (reg.withDeadlineAfter(5, TimeUnit.SECONDS).queryInstances(QueryInstancesRequest.newBuilder()
            .setService(ServiceKey.newBuilder().setName(service)).build()).getServiceInfo().getInstancesCount() == 1) {
          return System.nanoTime() - from;
        }
      } catch (RuntimeException e) {
        // not there yet
      }
      Workloads.parkMillis(1);
    }
    return -1;
  }

  // ---- per-node rows ----

  private void startMeasuring() {
    for (int i = 0; i < SIZE; i++) {
      cpu0[i] = cluster.node(i).isAlive() ? cluster.node(i).cpuMillis() : 0;
    }
  }

  private void stopMeasuring() {
    for (int i = 0; i < SIZE; i++) {
      if (cluster.node(i).isAlive()) {
        cpuSum[i] += cluster.node(i).cpuMillis() - cpu0[i];
        rssAfter[i] = cluster.node(i).rssKib() * 1024;
      }
    }
    loadAverage = loadAverage();
  }

  /** Idles {@code seconds} with no client, then reads each live member's RSS again. */
  private void settle(int seconds) {
    if (seconds <= 0) {
      return;
    }
    Workloads.parkMillis(seconds * 1000L);
    for (int i = 0; i < SIZE; i++) {
      rssSettled[i] = cluster.node(i).isAlive() ? cluster.node(i).rssKib() * 1024 : 0;
    }
    settleSeconds = seconds;
  }

  private void nodeRows(Result r, long[] idle) {
    for (int i = 0; i < SIZE; i++) {
      String name = "node " + (i + 1) + ": ";
      r.row(name + "idle RSS after start", String.format("%.0f MiB", idle[i] / MIB), "<= 150 MB", idle[i] <= 150e6);
      r.row(name + "RSS at the end of the load", rssAfter[i] > 0 ? String.format("%.0f MiB", rssAfter[i] / MIB)
          : "- (killed)");
      if (settleSeconds > 0) {
        String what = name + "RSS " + settleSeconds + " s after the load";
        if (rssSettled[i] > 0) {
          r.row(what, String.format("%.0f MiB", rssSettled[i] / MIB), "<= 250 MB", rssSettled[i] <= 250e6);
        } else {
          r.row(what, "- (killed)");
        }
      }
      double pause = maxGcPauseMillis(cluster.gcLog(i));
      r.row(name + "largest GC pause of the run", Double.isNaN(pause) ? "no pause logged"
          : String.format("%.1f ms (of %d pauses)", pause, gcPauses(cluster.gcLog(i))), "<= 50 ms",
          Double.isNaN(pause) || pause <= 50);
      r.row(name + "server CPU, measured phase(s)", cluster.node(i).isAlive()
          ? String.format("%.2f s", cpuSum[i] / 1000.0) : "- (killed)");
    }
    r.row("load average (1/5/15 min) at the end of the measured phase", loadAverage);
  }

  private static final Pattern PAUSE = Pattern.compile("Pause.*?(\\d+(?:\\.\\d+)?)ms\\s*$");

  /** The largest GC pause in a member's {@code -Xlog:gc} file, milliseconds; NaN when the log has no pause. */
  static double maxGcPauseMillis(Path gcLog) {
    double max = Double.NaN;
    try {
      for (String line : Files.readAllLines(gcLog)) {
        Matcher m = PAUSE.matcher(line);
        if (m.find()) {
          double ms = Double.parseDouble(m.group(1));
          if (Double.isNaN(max) || ms > max) {
            max = ms;
          }
        }
      }
    } catch (IOException e) {
      return Double.NaN;
    }
    return max;
  }

  /** Number of GC pauses in the log. */
  static int gcPauses(Path gcLog) {
    try {
      return (int) Files.readAllLines(gcLog).stream().filter(l -> PAUSE.matcher(l).find()).count();
    } catch (IOException e) {
      return 0;
    }
  }

  static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+", -1);
      return f[0] + " / " + f[1] + " / " + f[2];
    } catch (IOException | RuntimeException e) {
      return "?";
    }
  }

  // ---- helpers ----

  /** Runs {@code call} until it does not throw, for at most {@code atMost}; then rethrows. */
  private static void retry(Duration atMost, Runnable call) {
    long deadline = System.nanoTime() + atMost.toNanos();
    while (true) {
      try {
        call.run();
        return;
      } catch (RuntimeException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        Workloads.parkMillis(50);
      }
    }
  }

  private void close() {
    extraDrivers.forEach(RosterDriver::close);
    for (int i = 0; i < SIZE; i++) {
      drivers[i].close();
    }
  }

  private List<BenchClient> connectAll(int n, IntFunction<BenchClient> make) throws Exception {
    BenchClient[] out = new BenchClient[n];
    try {
      parallel(n, args.size("connect-concurrency"), i -> out[i] = make.apply(i));
    } catch (Exception e) {
      closeAll(java.util.Arrays.stream(out).filter(c -> c != null).toList());
      throw e;
    }
    return java.util.Arrays.asList(out);
  }

  private void closeAll(List<BenchClient> clients) throws Exception {
    parallel(clients.size(), args.size("connect-concurrency"), i -> clients.get(i).close());
  }

  private static void parallel(int n, int threads, Workloads.IntTask task) throws Exception {
    Workloads.parallel(n, threads, task);
  }

}
