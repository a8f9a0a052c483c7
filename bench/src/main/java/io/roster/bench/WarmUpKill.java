package io.roster.bench;

import io.roster.bench.driver.BenchClient;
import io.roster.bench.driver.Driver;
import io.roster.bench.driver.Drivers;
import io.roster.bench.driver.RosterDriver;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code warmkill} workload: a provider killed with -9 inside a fresh server's warm-up (the
 * default window, 5 s), until a subscriber on the Roster SDK sees it gone. As a new user tries
 * it: start a server, then at once a subscriber and a provider (a child JVM), and kill the
 * provider a few seconds after the start. The server saw the departure, so its subscribers must
 * not hold it (docs/decisions.md, record 20); the same kill outside the window is W6.
 */
final class WarmUpKill {

  /** The server's default warm-up: the window the kill must fall into. */
  private static final Duration WINDOW = Duration.ofSeconds(5);

  private WarmUpKill() {}

  static Result run(Args args, Path jar, Path logDir) throws Exception {
    int trials = args.size("warmkill-trials");
    Result r = new Result("warmkill", "Warm-up kill: a provider JVM killed with -9 inside a fresh server's "
        + "5 s warm-up; until a subscriber sees it gone (" + trials + " fresh servers)");
    List<Long> latencies = new ArrayList<>();
    List<Long> killedAfter = new ArrayList<>();
    Files.createDirectories(logDir);
    for (int trial = 0; trial < trials; trial++) {
      int port = Ports.free();
      long spawned = System.nanoTime();
      ServerProcess server = LocalServer.launcher(jar, args.serverJvm, logDir)
          .launch("warmkill-" + trial + "-server", "127.0.0.1", port, List.of(), List.of("--warm-up", "5s"));
      try (Driver driver = Drivers.create("roster", "127.0.0.1:" + port, RosterDriver.MassMode.SDK)) {
        server.awaitServing(Duration.ofSeconds(30));
        try (BenchClient sub = driver.client("warmkill-subscriber")) {
          Tracker t = new Tracker();
          sub.subscribe("warmkill-svc", t::onList);
          int providerPort = 48000 + trial;
          try (ChildProvider p = new ChildProvider("roster", "127.0.0.1:" + port, "warmkill-svc", "10.6.1.1",
              providerPort)) {
            p.awaitRegistered(60);
            if (!Workloads.await(Duration.ofSeconds(30), () -> t.seenAt.containsKey(providerPort))) {
              r.note("trial " + trial + ": the subscriber never saw the provider");
              continue;
            }
            long killed = System.nanoTime();
            p.kill9();
            if (killed - spawned >= WINDOW.toNanos()) {
              r.note(String.format("trial %d: the kill came %.1f s after the spawn, after the window; not counted",
                  trial, (killed - spawned) / 1e9));
              continue;
            }
            if (Workloads.await(Duration.ofSeconds(30), () -> t.goneAt.containsKey(providerPort))) {
              latencies.add(t.goneAt.get(providerPort) - killed);
              killedAfter.add(killed - spawned);
            } else {
              r.note("trial " + trial + ": still there 30 s after the kill");
            }
          }
        }
      } finally {
        server.close(); // SIGTERM, SIGKILL after 15 s
      }
    }
    r.row("kill -9 inside the warm-up -> subscriber sees it gone", Stats.ofNanosAsMillis(latencies).format("ms"));
    r.row("the kills came after the server's spawn", Stats.ofNanosAsMillis(killedAfter).format("ms"));
    r.note("server: " + String.join(" ", args.serverJvm) + " with --warm-up 5s; subscriber: the Roster SDK in the load "
        + "generator's JVM; provider: a child JVM (" + String.join(" ", ChildProvider.JVM_FLAGS) + ")");
    return r;
  }
}
