package io.roster.bench;

import io.roster.bench.driver.BenchClient;
import io.roster.bench.driver.Driver;
import io.roster.bench.driver.Drivers;
import io.roster.bench.driver.Endpoint;
import io.roster.bench.driver.RosterDriver;
import io.roster.server.testing.process.ServerProcess;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The {@code nacosfirst} workload: where a fresh nacos-client JVM's first register → push goes,
 * against a warm server.
 *
 * <p>One server is started (with its HTTP port, where the client looks for it) and warmed by
 * {@code nacosfirst-warming} rounds (3) of the {@code first} workload's nacos-client round in the
 * load generator's JVM (0: the first run is the server's first Nacos client). Then the server's {@code roster.trace.nacos} logger is set to DEBUG through
 * {@code PUT /nacos/v1/ns/operator/log}, and {@code nacosfirst-runs} times a fresh JVM ({@link
 * #main}) makes one NamingService, subscribes to a new service and registers an instance in it,
 * waiting for its listener to see it; then, as the steady figure beside it, a second instance. The child prints its own times, the server's log its
 * steps (both in microseconds of the same wall clock); {@link Split} puts them side by side.
 */
final class NacosFirst {

  private NacosFirst() {}

  /** A child JVM's run: args target service; prints "NACOSFIRST name=micros ...". */
  public static void main(String[] args) {
    Map<String, Long> at = new LinkedHashMap<>();
    at.put("jvm", ManagementFactory.getRuntimeMXBean().getStartTime() * 1000);
    at.put("main", now());
    String service = args[1];
    Endpoint endpoint = new Endpoint("10.78.0.1", 8080);
    Endpoint next = new Endpoint("10.78.0.2", 8080);
    CompletableFuture<Long> seen = new CompletableFuture<>();
    CompletableFuture<Long> seenNext = new CompletableFuture<>();
    try (Driver driver = Drivers.create("nacos", args[0], RosterDriver.MassMode.SDK)) {
      at.put("create", now());
      try (BenchClient client = driver.client("nacosfirst")) {
        at.put("created", now());
        client.subscribe(service, list -> {
          if (list.contains(endpoint)) {
            seen.complete(now());
          }
          if (list.contains(next)) {
            seenNext.complete(now());
          }
        });
        at.put("subscribed", now());
        at.put("register", now());
        client.register(service, endpoint);
        at.put("registered", now());
        at.put("seen", seen.get(30, TimeUnit.SECONDS));
        // The same connection's second registration: the steady figure beside the first.
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(FirstRequest.GAP_MS));
        at.put("registerNext", now());
        client.register(service, next);
        at.put("seenNext", seenNext.get(30, TimeUnit.SECONDS));
      }
    } catch (Exception e) {
      System.out.println("NACOSFIRST_FAILED " + e);
      System.exit(1);
    }
    StringBuilder sb = new StringBuilder("NACOSFIRST");
    at.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
    System.out.println(sb);
    System.out.flush();
    System.exit(0); // nacos-client leaves non-daemon threads behind
  }

  private static long now() {
    Instant i = Instant.now();
    return i.getEpochSecond() * 1_000_000 + i.getNano() / 1000;
  }

  static Result run(Args args, Path jar, Path logDir) throws Exception {
    int runs = args.size("nacosfirst-runs");
    int warming = args.size("nacosfirst-warming");
    Result r = new Result("nacosfirst", "A fresh nacos-client JVM's first register -> push against a warm server, "
        + "and where its time goes");
    try (ServerProcess server = LocalServer.withHttpPort(jar, args.serverJvm, logDir, "nacosfirst")) {
      String target = "127.0.0.1:" + server.httpPort();
      try (Driver driver = Drivers.create("nacos", target, RosterDriver.MassMode.SDK)) {
        for (int i = 0; i < warming; i++) {
          FirstRequest.round(driver);
        }
      }
      traceOn(server.httpPort());
      List<Split> splits = new ArrayList<>();
      for (int i = 0; i < runs; i++) {
        long offset = Files.size(server.log);
        String service = "nacosfirst-" + i + "-" + Long.toString(System.nanoTime(), 36);
        Map<String, Long> client = child(target, service, logDir.resolve("nacosfirst-client-" + i + ".log"));
        Split s = Split.of(client, serverLines(server.log, offset));
        System.out.println("nacosfirst run " + (i + 1) + ": " + s.line());
        splits.add(s);
      }
      for (String step : Split.STEPS) {
        double[] ms = splits.stream().mapToDouble(s -> s.ms().get(step)).toArray();
        StringBuilder each = new StringBuilder();
        for (double m : ms) {
          each.append(each.length() == 0 ? "" : " ").append(String.format("%.1f", m));
        }
        r.row(step, Stats.of(ms).format("ms") + "; each run: " + each);
      }
    }
    r.note(runs + " fresh nacos-client 2.5.1 JVMs (the load generator's classpath, default flags) one after the "
        + "other against one server warmed by " + warming + " rounds of `first`'s nacos round; the server's "
        + "steps from its roster.trace.nacos log (DEBUG), the client's from its own clock; client and server on "
        + "the same machine's wall clock");
    return r;
  }

  /** Sets the server's roster.trace.nacos logger to DEBUG on its HTTP port. */
  private static void traceOn(int httpPort) throws IOException, InterruptedException {
    HttpResponse<String> answer = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
        "http://127.0.0.1:" + httpPort + "/nacos/v1/ns/operator/log?logName=roster.trace.nacos&logLevel=DEBUG"))
        .PUT(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
    if (answer.statusCode() != 200) {
      throw new IllegalStateException("setting roster.trace.nacos to DEBUG: " + answer.statusCode() + " "
          + answer.body());
    }
  }

  /** Runs {@link #main} in a fresh JVM and returns its times. */
  private static Map<String, Long> child(String target, String service, Path log)
      throws IOException, InterruptedException {
    List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), NacosFirst.class.getName(), target, service);
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("the nacos-client JVM did not finish within 60 s; see " + log);
    }
    for (String line : Files.readAllLines(log)) {
      if (line.startsWith("NACOSFIRST ")) {
        Map<String, Long> at = new LinkedHashMap<>();
        for (String kv : line.substring("NACOSFIRST ".length()).split(" ", -1)) {
          String[] pair = kv.split("=", 2);
          at.put(pair[0], Long.parseLong(pair[1]));
        }
        return at;
      }
    }
    throw new IllegalStateException("the nacos-client JVM printed no times; see " + log);
  }

  /**
   * The server's log after {@code offset}, once it holds an ack read after the second registration
   * (waits at most 10 s: the log is written behind a queue).
   */
  static List<String> serverLines(Path log, long offset) throws IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      List<String> lines = Split.read(log, offset);
      int registered = -1;
      for (int i = 0; i < lines.size(); i++) {
        if (lines.get(i).contains(" step=applied type=InstanceRequest ")) {
          registered++;
        } else if (registered >= 1 && lines.get(i).contains(" step=acked ")) {
          return lines;
        }
      }
      if (System.nanoTime() > deadline) {
        return lines;
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
    }
  }
}
