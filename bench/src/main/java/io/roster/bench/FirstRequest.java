package io.roster.bench;

import io.roster.bench.driver.BenchClient;
import io.roster.bench.driver.Driver;
import io.roster.bench.driver.Drivers;
import io.roster.bench.driver.Endpoint;
import io.roster.bench.driver.RosterDriver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The {@code first} workload: how long the first registration after a server's start takes to
 * reach a subscriber, against the next ones, for the Roster SDK and for nacos-client 2.x.
 *
 * <p>One <em>round</em> against a server: a subscriber client and a provider client connect, the
 * subscriber subscribes to a fresh service, then the provider registers {@value #CHANGES}
 * instances one after the other; each is timed from the call to the subscriber's listener seeing
 * it. Every round gets a freshly started server, so its first registration is the server's first
 * of its life. Each driver runs its rounds twice:
 * <ul>
 *   <li><b>warm client</b>: in the load generator's own JVM, after one untimed round against a
 *       throwaway server, so that the client's code is loaded and compiled: what remains of the
 *       first figure over the next ones is the <em>server's</em> share;
 *   <li><b>cold client</b>: in a fresh JVM ({@link #main}), as an application's first call: the
 *       difference with the warm client's first figure is the <em>client's</em> share.
 * </ul>
 */
final class FirstRequest {

  /** Registrations per round: the first, and the next ones as the steady figure. */
  static final int CHANGES = 5;
  /** Between registrations: longer than the server's push window, which would delay the next push. */
  static final long GAP_MS = 100;

  private static final List<String> DRIVERS = List.of("roster", "nacos");

  private FirstRequest() {}

  /** A child JVM's round: args driver target; prints "LATENCIES_MS a b c ...". */
  public static void main(String[] args) {
    try (Driver driver = Drivers.create(args[0], args[1], RosterDriver.MassMode.SDK)) {
      double[] ms = round(driver);
      StringBuilder sb = new StringBuilder("LATENCIES_MS");
      for (double m : ms) {
        sb.append(' ').append(m);
      }
      System.out.println(sb);
      System.out.flush();
    }
    System.exit(0); // nacos-client leaves non-daemon threads behind
  }

  static Result run(Args args, Path jar, Path logDir) throws Exception {
    Result r = new Result("first", "First request: register -> subscriber push, the first of a fresh server's life against the next "
        + (CHANGES - 1));
    int trials = args.size("first-trials");
    LocalServer.warmUpProbe();
    for (String name : DRIVERS) {
      try (LocalServer s = LocalServer.start(jar, args.serverJvm, logDir, "first-" + name + "-warming")) {
        round(name, s); // loads and compiles this JVM's client path; not counted
      }
      List<Double> warmFirst = new ArrayList<>();
      List<Double> coldFirst = new ArrayList<>();
      List<Double> next = new ArrayList<>();
      List<Double> connect = new ArrayList<>();
      for (int t = 0; t < trials; t++) {
        try (LocalServer s = LocalServer.start(jar, args.serverJvm, logDir, "first-" + name + "-" + t)) {
          double[] ms = round(name, s);
          warmFirst.add(ms[0]);
          for (int i = 1; i < CHANGES; i++) {
            next.add(ms[i]);
          }
          connect.add(ms[CHANGES]);
        }
        try (LocalServer s = LocalServer.start(jar, args.serverJvm, logDir, "first-" + name + "-cold-" + t)) {
          coldFirst.add(child(name, target(name, s), logDir.resolve("first-" + name + "-client-" + t + ".log"))[0]);
        }
      }
      Stats warm = Stats.of(unbox(warmFirst));
      Stats cold = Stats.of(unbox(coldFirst));
      Stats steady = Stats.of(unbox(next));
      String label = name.equals("roster") ? "Roster SDK" : "nacos-client 2.5.1";
      r.row(label + ": the server's first two connections, warm client", Stats.of(unbox(connect)).format("ms"));
      r.row(label + ": first, cold client (fresh JVM)", cold.format("ms"));
      r.row(label + ": first, warm client", warm.format("ms"));
      r.row(label + ": next " + (CHANGES - 1) + ", warm client", steady.format("ms"));
      r.row(label + ": server's share of the first (warm client's first - next, p50)",
          String.format("%.1f ms", warm.p50() - steady.p50()), "<= 20 ms", warm.p50() - steady.p50() <= 20);
      r.row(label + ": client's share of the first (cold - warm client's first, p50)",
          String.format("%.1f ms", cold.p50() - warm.p50()));
    }
    r.note(trials + " fresh servers per driver and client kind; the server as `make run` starts it (CDS archive, "
        + "server/jvm.options); cold clients are child JVMs with the load generator's classpath and default flags");
    return r;
  }

  private static double[] round(String name, LocalServer server) {
    try (Driver driver = Drivers.create(name, target(name, server), RosterDriver.MassMode.SDK)) {
      return round(driver);
    }
  }

  /** The nacos driver names the HTTP port; the client adds 1000 for gRPC, Roster's port. */
  private static String target(String name, LocalServer server) {
    return name.equals("nacos") ? "127.0.0.1:" + (server.port - 1000) : server.address();
  }

  /**
   * One round on {@code driver}'s server: the latency of each registration, in ms, then how long
   * the subscriber's client took to connect (the server's first connection).
   */
  static double[] round(Driver driver) {
    String service = "first-" + Long.toString(System.nanoTime(), 36);
    AtomicReference<Seen> waiting = new AtomicReference<>();
    double[] ms = new double[CHANGES + 1];
    long c0 = System.nanoTime();
    try (BenchClient subscriber = driver.client("first-subscriber");
        BenchClient provider = driver.client("first-provider")) {
      ms[CHANGES] = (System.nanoTime() - c0) / 1e6; // both connected
      subscriber.subscribe(service, list -> {
        Seen w = waiting.get();
        if (w != null && list.contains(w.endpoint)) {
          w.at.complete(System.nanoTime());
        }
      });
      for (int i = 0; i < CHANGES; i++) {
        if (i > 0) {
          // Past the push window (20 ms), so that no registration waits for the previous push's.
          java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(GAP_MS));
        }
        Seen w = new Seen(new Endpoint("10.77.0." + (i + 1), 8080), new CompletableFuture<>());
        waiting.set(w);
        long t0 = System.nanoTime();
        provider.register(service, w.endpoint);
        try {
          ms[i] = (w.at.get(30, TimeUnit.SECONDS) - t0) / 1e6;
        } catch (Exception e) {
          throw new IllegalStateException("the subscriber did not see " + w.endpoint + " within 30 s", e);
        }
      }
    }
    return ms;
  }

  /** Runs {@link #main} in a fresh JVM and returns its latencies. */
  private static double[] child(String name, String target, Path log) throws IOException, InterruptedException {
    List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), FirstRequest.class.getName(), name, target);
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("the cold " + name + " client did not finish within 60 s; see " + log);
    }
    for (String line : Files.readAllLines(log)) {
      if (line.startsWith("LATENCIES_MS ")) {
        return Arrays.stream(line.substring("LATENCIES_MS ".length()).split(" ")).mapToDouble(Double::parseDouble)
            .toArray();
      }
    }
    throw new UncheckedIOException(new IOException("the cold " + name + " client printed no latencies; see " + log));
  }

  /** The endpoint a round waits for, and when the subscriber saw it (System.nanoTime()). */
  private record Seen(Endpoint endpoint, CompletableFuture<Long> at) {}

  private static double[] unbox(List<Double> list) {
    return list.stream().mapToDouble(Double::doubleValue).toArray();
  }
}
