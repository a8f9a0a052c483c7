package io.roster.bench;

import io.roster.bench.driver.BenchClient;
import io.roster.bench.driver.Endpoint;
import io.roster.bench.driver.RosterDriver;
import io.roster.server.testing.process.LocalCluster;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code elections} workload: whether a loaded machine makes a cluster change leaders, and
 * what a leader's death costs, for the server of {@code --server-jar} and, with {@code
 * --baseline-jar}, beside it for another build (three members each, at the same time, on the
 * same cores).
 *
 * <ol>
 *   <li><b>Load.</b> Every cluster gets C SDK clients (client i on member i mod 3, all three in
 *       its list), each registering and deregistering an instance of its own, one blocking call
 *       at a time, for M minutes; meanwhile H shell loops spin at nice 0 (a CPU hog beside the
 *       members, as other work on the machine). Per cluster: the leader changes each member saw
 *       ({@code roster_cluster_leader_changes_total}, read before and after), the calls' latency
 *       and failures, the stalls and cut-offs the members logged, the largest GC pause.
 *   <li><b>Leader killed.</b> The hog stopped, for each trial and each cluster in turn (the
 *       order alternating): a writer on a survivor registers a new port every ~2 ms, the leader
 *       is killed with -9, and the time until the first register started after the kill
 *       succeeds is the write gap (as W11); the member is then started again on its data.
 * </ol>
 *
 * <p>Roster only; not in {@code all} (it runs for M minutes). Not thread-safe; one run at a time.
 */
final class Elections {

  private static final int SIZE = 3;
  private static final String METRIC = "roster_cluster_leader_changes_total";

  /** One cluster of the run, with the label its rows carry. */
  private record Side(String label, Path jar, LocalCluster cluster) {}

  private Elections() {}

  static Result run(Args args, Path jar, Path logDir) throws Exception {
    int minutes = args.size("elections-minutes");
    int clients = args.size("elections-clients");
    int hogs = args.size("elections-hog");
    int trials = args.size("elections-trials");
    Result r = new Result("elections", String.format("Elections on a loaded machine: %d SDK clients writing to each "
        + "three-member cluster for %d min beside %d spinning shell loops, then %d kill -9 of the leader per cluster",
        clients, minutes, hogs, trials));
    Files.createDirectories(logDir);
    List<Side> sides = new ArrayList<>();
    try {
      sides.add(new Side("after", jar, start(args, jar, logDir, "elections-after")));
      if (args.baselineJar != null) {
        Path base = Path.of(args.baselineJar);
        sides.add(new Side("before", base, start(args, base, logDir, "elections-before")));
      }
      for (Side s : sides) {
        r.note(s.label() + ": " + s.jar().toAbsolutePath());
      }
      load(args, r, sides, minutes, clients, hogs);
      kills(r, sides, trials);
    } finally {
      for (Side s : sides) {
        s.cluster().close();
      }
    }
    r.note("members with default flags (--member-down-after 3s, --member-grace 10s), peer ports "
        + (args.peerTls ? "with mutual TLS" : "in plaintext") + ", each with -Xlog:gc to a file; the clusters, the "
        + "load generator and the hog share the machine's " + Runtime.getRuntime().availableProcessors() + " cores");
    return r;
  }

  private static LocalCluster start(Args args, Path jar, Path logDir, String name) {
    return LocalCluster.builder(LocalServer.launcher(jar, args.serverJvm, logDir)).size(SIZE).peerTls(args.peerTls)
        .logName(name).gcLogs().startTimeout(Duration.ofMinutes(2)).start();
  }

  // ---- the load, beside the hog ----

  private static void load(Args args, Result r, List<Side> sides, int minutes, int nClients, int hogs)
      throws Exception {
    List<RosterDriver> drivers = new ArrayList<>();
    List<List<BenchClient>> clients = new ArrayList<>();
    List<Process> hog = new ArrayList<>();
    try {
      for (Side s : sides) {
        List<BenchClient> mine = new ArrayList<>();
        RosterDriver[] byMember = new RosterDriver[SIZE];
        for (int m = 0; m < SIZE; m++) {
          byMember[m] = new RosterDriver(s.cluster().servers(m), RosterDriver.MassMode.SDK);
          drivers.add(byMember[m]);
        }
        BenchClient[] made = new BenchClient[nClients];
        Workloads.parallel(nClients, args.size("connect-concurrency"),
            i -> made[i] = byMember[i % SIZE].client("elections-" + s.label() + "-" + i));
        Collections.addAll(mine, made);
        clients.add(mine);
      }
      for (int h = 0; h < hogs; h++) {
        hog.add(new ProcessBuilder("sh", "-c", "while :; do :; done").redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD).start());
      }
      long[][] before = new long[sides.size()][];
      long[][] logFrom = new long[sides.size()][SIZE];
      for (int k = 0; k < sides.size(); k++) {
        before[k] = leaderChanges(sides.get(k).cluster());
        for (int m = 0; m < SIZE; m++) {
          logFrom[k][m] = Files.size(sides.get(k).cluster().node(m).log);
        }
      }
      AtomicBoolean stop = new AtomicBoolean();
      List<List<Long>> latencies = new ArrayList<>();
      List<AtomicLong> failures = new ArrayList<>();
      int threads = nClients * sides.size();
      ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
      List<Future<?>> running = new ArrayList<>();
      List<Double> loads = Collections.synchronizedList(new ArrayList<>());
      long t0 = System.nanoTime();
      long end = t0 + Duration.ofMinutes(minutes).toNanos();
      try {
        for (int k = 0; k < sides.size(); k++) {
          List<Long> lat = Collections.synchronizedList(new ArrayList<>());
          AtomicLong failed = new AtomicLong();
          latencies.add(lat);
          failures.add(failed);
          for (int i = 0; i < nClients; i++) {
            BenchClient c = clients.get(k).get(i);
            int ci = i;
            running.add(pool.submit(() -> write(c, ci, stop, lat, failed)));
          }
        }
        running.add(pool.submit(() -> {
          while (!stop.get()) {
            loads.add(oneMinuteLoad());
            Workloads.parkMillis(5_000);
          }
          return null;
        }));
        Workloads.parkUntil(end);
      } finally {
        stop.set(true);
        for (Future<?> f : running) {
          f.get();
        }
        pool.shutdown();
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      String loadAverage = ClusterWorkloads.loadAverage();
      for (Process p : hog) {
        p.destroyForcibly().waitFor();
      }
      hog.clear();
      for (int k = 0; k < sides.size(); k++) {
        Side s = sides.get(k);
        long[] after = leaderChanges(s.cluster());
        StringBuilder perMember = new StringBuilder();
        long most = 0;
        for (int m = 0; m < SIZE; m++) {
          long changes = after[m] < 0 || before[k][m] < 0 ? -1 : after[m] - before[k][m];
          most = Math.max(most, changes);
          perMember.append(m == 0 ? "" : " / ").append(changes < 0 ? "?" : Long.toString(changes));
        }
        r.row(s.label() + ": leader changes seen by members 1 / 2 / 3 in " + minutes + " min", perMember.toString(),
            "0", most == 0);
        Stats st = Stats.ofNanosAsMillis(latencies.get(k));
        r.row(s.label() + ": register / deregister calls", String.format("%,.0f/s; %s; %,d failed", st.n() / seconds,
            st.format("ms"), failures.get(k).get()));
        String[] counted = {"was stalled for", "cannot take writes", "Lost leadership", "Unexpected long sleep"};
        StringBuilder lines = new StringBuilder();
        for (String what : counted) {
          lines.append(lines.length() == 0 ? "" : "; ").append('"').append(what).append("\" ");
          for (int m = 0; m < SIZE; m++) {
            lines.append(m == 0 ? "" : " / ").append(count(s.cluster().node(m).log, logFrom[k][m], what));
          }
        }
        r.row(s.label() + ": members' log lines in the load (members 1 / 2 / 3)", lines.toString());
        StringBuilder gc = new StringBuilder();
        for (int m = 0; m < SIZE; m++) {
          double pause = ClusterWorkloads.maxGcPauseMillis(s.cluster().gcLog(m));
          gc.append(m == 0 ? "" : " / ").append(Double.isNaN(pause) ? "-" : String.format("%.0f", pause));
        }
        r.row(s.label() + ": largest GC pause of members 1 / 2 / 3 so far", gc + " ms");
      }
      double[] la = loads.stream().mapToDouble(Double::doubleValue).toArray();
      Stats l = Stats.of(la);
      r.row("1-minute load average during the load (every 5 s)", String.format("median %.1f, max %.1f (n=%d); %s at "
          + "its end (1/5/15 min)", l.p50(), l.max(), l.n(), loadAverage));
    } finally {
      for (Process p : hog) {
        p.destroyForcibly().waitFor();
      }
      for (List<BenchClient> list : clients) {
        Workloads.parallel(list.size(), args.size("connect-concurrency"), i -> list.get(i).close());
      }
      drivers.forEach(RosterDriver::close);
    }
  }

  /** Client {@code i}'s loop: register, then deregister, a port of its own; one call at a time. */
  private static Void write(BenchClient c, int i, AtomicBoolean stop, List<Long> lat, AtomicLong failed) {
    String service = "elections-svc-" + (i % 10);
    long[] mine = new long[1 << 12];
    int n = 0;
    for (int k = 0; !stop.get(); k++) {
      Endpoint e = new Endpoint("10.13." + (i / 250) + "." + (i % 250 + 1), 20000 + (k / 2) % 50);
      long s = System.nanoTime();
      try {
        if (k % 2 == 0) {
          c.register(service, e);
        } else {
          c.deregister(service, e);
        }
        mine[n++] = System.nanoTime() - s;
        if (n == mine.length) {
          flush(mine, n, lat);
          n = 0;
        }
      } catch (RuntimeException refused) {
        failed.incrementAndGet(); // timed out, or refused while no leader; the next call goes on
      }
    }
    flush(mine, n, lat);
    return null;
  }

  private static void flush(long[] samples, int n, List<Long> into) {
    List<Long> batch = new ArrayList<>(n);
    for (int j = 0; j < n; j++) {
      batch.add(samples[j]);
    }
    into.addAll(batch);
  }

  /** Each member's {@value #METRIC} from its /metrics; -1 for a member that does not answer. */
  private static long[] leaderChanges(LocalCluster cluster) {
    long[] out = new long[SIZE];
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    for (int m = 0; m < SIZE; m++) {
      out[m] = -1;
      for (int attempt = 0; attempt < 5 && out[m] < 0; attempt++) {
        try {
          String body = http.send(HttpRequest.newBuilder(URI.create("http://" + cluster.hosts.get(m) + ":"
              + cluster.node(m).httpPort() + "/metrics")).timeout(Duration.ofSeconds(20)).build(),
              HttpResponse.BodyHandlers.ofString()).body();
          for (String line : body.lines().toList()) {
            if (line.startsWith(METRIC + " ")) {
              out[m] = (long) Double.parseDouble(line.substring(METRIC.length() + 1).trim());
            }
          }
        } catch (IOException | RuntimeException e) {
          Workloads.parkMillis(1_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return out;
        }
      }
    }
    return out;
  }

  /** Lines of {@code log} from byte {@code from} on that contain {@code what}. */
  private static long count(Path log, long from, String what) {
    try {
      byte[] all = Files.readAllBytes(log);
      String tail = new String(all, (int) Math.min(from, all.length), (int) Math.max(0, all.length - from),
          java.nio.charset.StandardCharsets.UTF_8);
      return tail.lines().filter(l -> l.contains(what)).count();
    } catch (IOException e) {
      return -1;
    }
  }

  private static double oneMinuteLoad() {
    try {
      return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+", -1)[0]);
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
  }

  // ---- the leader killed ----

  private static void kills(Result r, List<Side> sides, int trials) throws Exception {
    List<List<Long>> gaps = new ArrayList<>();
    List<List<String>> each = new ArrayList<>();
    for (int k = 0; k < sides.size(); k++) {
      gaps.add(new ArrayList<>());
      each.add(new ArrayList<>());
    }
    for (int t = 0; t < trials; t++) {
      for (int j = 0; j < sides.size(); j++) {
        int k = t % 2 == 0 ? j : sides.size() - 1 - j; // alternate which cluster goes first
        long gap = killLeader(sides.get(k).cluster(), "elections-" + sides.get(k).label() + "-writer-" + t);
        each.get(k).add(gap < 0 ? "none within 30 s" : String.format("%.0f", gap / 1e6));
        if (gap >= 0) {
          gaps.get(k).add(gap);
        }
      }
    }
    for (int k = 0; k < sides.size(); k++) {
      Stats g = Stats.ofNanosAsMillis(gaps.get(k));
      boolean all = gaps.get(k).size() == trials;
      r.row(sides.get(k).label() + ": kill -9 of the leader -> next successful register through a survivor",
          String.join(", ", each.get(k)) + " ms; " + g.format("ms"), "<= 2000 ms", all && g.max() <= 2000);
    }
    r.row("load average (1/5/15 min) after the kills", ClusterWorkloads.loadAverage());
  }

  /**
   * Kills member {@code cluster}'s leader under a writer on a survivor; returns the nanoseconds
   * from the kill to the end of the first register started after it (-1: none within 30 s), once
   * the killed member is back and SERVING.
   */
  private static long killLeader(LocalCluster cluster, String writerId) throws Exception {
    int[] leader = {-1};
    Workloads.await(Duration.ofSeconds(60), () -> (leader[0] = cluster.leader()) >= 0);
    if (leader[0] < 0) {
      throw new IllegalStateException("no leader within 60 s");
    }
    int victim = leader[0];
    int survivor = (victim + 1) % SIZE;
    List<long[]> writes = Collections.synchronizedList(new ArrayList<>());
    AtomicBoolean stop = new AtomicBoolean();
    try (RosterDriver driver = new RosterDriver(cluster.node(survivor).address(), RosterDriver.MassMode.SDK);
        BenchClient writer = driver.client(writerId)) {
      Thread t = new Thread(() -> {
        int port = 50000;
        while (!stop.get()) {
          long s = System.nanoTime();
          try {
            writer.register("elections-writes", new Endpoint("10.13.250.1", port++ % 65000));
            writes.add(new long[] {s, System.nanoTime()});
          } catch (RuntimeException e) {
            // refused while there is no leader; the next call tries again
          }
          Workloads.parkMillis(2);
        }
      }, "elections-writer");
      t.start();
      try {
        Workloads.await(Duration.ofSeconds(30), () -> writes.size() >= 20);
        long t0 = System.nanoTime();
        cluster.node(victim).kill9();
        Workloads.await(Duration.ofSeconds(30), () -> writes.stream().anyMatch(w -> w[0] >= t0));
        long gap;
        synchronized (writes) {
          gap = writes.stream().filter(w -> w[0] >= t0).mapToLong(w -> w[1] - t0).min().orElse(-1);
        }
        return gap;
      } finally {
        stop.set(true);
        t.join(30_000);
        cluster.restart(victim);
      }
    }
  }
}
