package io.roster.bench;

import java.util.Locale;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The load generator's command line: {@code --name value} or {@code --name=value}, plus the
 * switch {@code --quick}. Every size has a full default and a {@code --quick} default; a flag
 * given explicitly wins over both. Unknown flags and bad values are errors that name the flag,
 * the value and what was expected.
 */
public final class Args {

  /** Every workload, in run order. */
  public static final List<String> ALL_WORKLOADS =
      List.of("startup", "first", "warmkill", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9", "w10", "w11", "w12", "slowhttp", "admin", "persist", "probe", "logins");

  /** The cluster workloads: three local Roster servers each, roster driver only. */
  public static final List<String> CLUSTER_WORKLOADS = List.of("w10", "w11", "w12");

  /**
   * Workloads run only when named, never by {@code all}: {@code elections} starts three-member
   * clusters of its own and takes many minutes (roster driver only); {@code nacosfirst} is a
   * diagnosis, a JVM per run (local server only).
   */
  public static final List<String> NAMED_WORKLOADS = List.of("nacosfirst", "elections");

  /** name -> {full default, quick default, help}. */
  private static final Map<String, String[]> SIZES = new LinkedHashMap<>();

  /** Sizes for which 0 means "none" rather than a mistake. */
  private static final Set<String> OPTIONAL_SIZES = Set.of("w4-flood", "w4-flood-nice", "elections-hog", "nacosfirst-warming");

  static {
    size("startup-trials", "5", "2", "server starts to time (local server only)");
    size("first-trials", "3", "1", "first: fresh servers per driver and client kind (local server only)");
    size("nacosfirst-runs", "8", "3", "nacosfirst: fresh nacos-client JVMs, one after the other, against one warm server (local server only)");
    size("nacosfirst-warming", "3", "3", "nacosfirst: rounds of first's nacos round that warm the server before the runs (0: the first run meets a fresh server)");
    size("warmkill-trials", "5", "2", "warmkill: fresh servers, one provider killed inside each one's warm-up (local server only)");
    size("slowhttp-clients", "200", "50", "slowhttp: connections trickling their HTTP requests a byte a second (local server only)");
    size("slowhttp-seconds", "30", "5", "slowhttp: seconds measured without the trickling connections, then as many with them");
    size("logins-seconds", "30", "5", "logins: seconds measured per phase (alone, guessers on other usernames, on the same one)");
    size("logins-guessers", "8", "8", "logins: threads guessing passwords from the measured clients' own host");
    size("admin-services", "10000", "1000", "admin: services registered (one instance each) before the admin API and the console are timed");
    size("admin-calls", "200", "50", "admin: timed calls per route");
    size("persist-instances", "100000", "10000", "persist: persistent instances registered, then read back after each restart");
    size("persist-services", "1000", "100", "persist: services they are spread over");
    size("probe-instances", "10000", "1000", "probe: persistent instances probed by three members");
    size("probe-seconds", "30", "6", "probe: seconds measured per phase (no probe, TCP, HTTP)");
    size("w1-clients", "1000", "200", "W1: clients to connect");
    size("w2-clients", "100", "20", "W2: registering clients");
    size("w2-instances", "100", "50", "W2: instances per client");
    size("w2-services", "1000", "200", "W2: services the instances are spread over");
    size("w2-rounds", "20", "2", "W2: rounds (fresh clients each round); round 1 is reported as cold, the median of the later half as warm");
    size("w3-services", "1000", "100", "W3: services");
    size("w3-instances", "10", "10", "W3: instances per service");
    size("w3-callers", "32", "32", "W3: concurrent query threads");
    size("w3-clients", "4", "4", "W3: clients the callers share");
    size("w3-warmup-seconds", "20", "2", "W3: seconds of queries before the measured ones (JIT warm-up on 2 cores takes ~15 s)");
    size("w3-seconds", "10", "3", "W3: measured seconds");
    size("w4-subscribers", "10", "10", "W4: subscribing clients");
    size("w4-warmup-changes", "50", "10", "W4: changes before the measured ones (reported apart as cold)");
    size("w4-changes", "200", "40", "W4: measured changes (register, deregister, ...) by the provider");
    size("w4-interval-ms", "100", "100", "W4: milliseconds between changes");
    size("w4-flood", "0", "0", "W4: threads guessing tokens from 127.0.0.2 meanwhile, in a child JVM (with --auth, "
        + "without --tls)");
    size("w4-flood-nice", "19", "19", "W4: the nice level of the flood's JVM (19: it takes only the CPU others leave, "
        + "as if on a machine of its own; 0: it competes as an equal)");
    size("w5-subscribers", "1000", "100", "W5: subscribing clients on one service");
    size("w5-warmup-changes", "20", "5", "W5: changes before the measured ones (reported apart as cold)");
    size("w5-changes", "20", "5", "W5: measured changes");
    size("w6-trials", "20", "3", "W6: kill -9 trials");
    size("w7-trials", "5", "1", "W7: SIGSTOP trials");
    size("w8-clients", "10000", "1000", "W8: clients, each with 1 instance and 1 subscription");
    size("w8-services", "1000", "100", "W8: services the instances and subscriptions are spread over");
    size("w9-instances", "10000", "10000", "W9: instances of the one service");
    size("w9-subscribers", "100", "20", "W9: subscribers (raw streams), once with full pushes and once with deltas");
    size("w9-warmup-changes", "20", "4", "W9: changes per phase before the measured ones");
    size("w9-changes", "40", "6", "W9: measured changes per phase");
    size("cluster-idle-seconds", "5", "2", "W10-W12: seconds the started cluster idles before its idle RSS is read");
    size("cluster-settle-seconds", "35", "1", "W10-W12: seconds the cluster idles after the load before its RSS is read "
        + "again (G1's idle collection runs every 15 s)");
    size("w10-subscribers", "10", "10", "W10: subscribers on node 3 (provider on node 1)");
    size("w10-warmup-rounds", "10", "1", "W10: rounds of W12's registration burst before the changes, so that the "
        + "members' JIT has compiled the log's path (0: none, the cold figure)");
    size("w10-warmup-changes", "50", "10", "W10: changes before the measured ones (reported apart as cold)");
    size("w10-changes", "200", "40", "W10: measured changes");
    size("w10-interval-ms", "100", "50", "W10: milliseconds between changes");
    size("w11-clients", "300", "30", "W11: SDK clients spread over the 3 nodes, one instance each");
    size("w11-services", "10", "5", "W11: services their instances are spread over");
    size("w11-doomed", "5", "1", "W11: provider child JVMs connected only to the killed node");
    size("w11-subscribers", "2", "1", "W11: subscribers per surviving node, each on every service");
    size("w12-clients", "100", "21", "W12: registering clients, client i on node (i mod 3) + 1");
    size("w12-instances", "100", "50", "W12: instances per client");
    size("w12-services", "1000", "200", "W12: services the instances are spread over (fresh ones every round)");
    size("w12-rounds", "20", "2", "W12: rounds (fresh clients each round); round 1 is cold, the median of the later half "
        + "warm (as W2: three members compiling on 2 shared cores settle after ~10 rounds)");
    size("elections-minutes", "10", "1", "elections: minutes of writes to each cluster beside the CPU hog");
    size("elections-clients", "60", "12", "elections: SDK clients per cluster, each registering and deregistering "
        + "one blocking call at a time, client i on member (i mod 3) + 1");
    size("elections-hog", "2", "2", "elections: shell loops spinning at nice 0 during the writes (0: none)");
    size("elections-trials", "5", "2", "elections: kill -9 of the leader per cluster, after the writes (no hog)");
    size("connect-concurrency", "32", "32", "clients connected in parallel (W1, W5, W8, setup)");
  }

  private static void size(String name, String full, String quick, String help) {
    SIZES.put(name, new String[] {full, quick, help});
  }

  final boolean quick;
  /** Whether the started server (and so every workload's clients) is on TLS. */
  final boolean tls;
  /** Whether the started server runs with an auth file (and every client presents a token). */
  final boolean auth;
  final String driver;
  final String target;
  final String serverJar;
  /** elections: a second build whose clusters run beside {@link #serverJar}'s; null for none. */
  final @org.jspecify.annotations.Nullable String baselineJar;
  final List<String> serverJvm;
  final String rosterMass;
  /** W10-W12: whether the cluster's peer ports speak mutual TLS (the default), or {@code --peer-tls off}. */
  final boolean peerTls;
  final Set<String> workloads;
  final String out;
  private final Map<String, Integer> sizes;

  private Args(boolean quick, boolean tls, boolean auth, String driver, String target, String serverJar,
      @org.jspecify.annotations.Nullable String baselineJar, List<String> serverJvm,
      String rosterMass, boolean peerTls, Set<String> workloads, String out, Map<String, Integer> sizes) {
    this.quick = quick;
    this.tls = tls;
    this.auth = auth;
    this.driver = driver;
    this.target = target;
    this.serverJar = serverJar;
    this.baselineJar = baselineJar;
    this.serverJvm = serverJvm;
    this.rosterMass = rosterMass;
    this.peerTls = peerTls;
    this.workloads = workloads;
    this.out = out;
    this.sizes = sizes;
  }

  /** A size flag's value (full or quick default unless given). */
  public int size(String name) {
    Integer v = sizes.get(name);
    if (v == null) {
      throw new IllegalArgumentException("no size named " + name);
    }
    return v;
  }

  /** Whether the bench starts its own server (no {@code --target}). */
  public boolean localServer() {
    return target == null;
  }

  public static Args parse(String... argv) {
    Map<String, String> given = new LinkedHashMap<>();
    boolean quick = false;
    boolean tls = false;
    boolean auth = false;
    for (int i = 0; i < argv.length; i++) {
      String a = argv[i];
      if (a.equals("--quick")) {
        quick = true;
        continue;
      }
      if (a.equals("--tls")) {
        tls = true;
        continue;
      }
      if (a.equals("--auth")) {
        auth = true;
        continue;
      }
      if (!a.startsWith("--") || a.length() == 2) {
        throw new IllegalArgumentException(a + ": not a flag (expected: --name value or --name=value; see --help)");
      }
      String name;
      String value;
      int eq = a.indexOf('=');
      if (eq > 0) {
        name = a.substring(2, eq);
        value = a.substring(eq + 1);
      } else {
        name = a.substring(2);
        if (i + 1 >= argv.length) {
          throw new IllegalArgumentException("--" + name + ": no value (expected: --" + name + " VALUE)");
        }
        value = argv[++i];
      }
      given.put(name, value);
    }
    String driver = given.getOrDefault("driver", "roster");
    if (!driver.equals("roster") && !driver.equals("nacos")) {
      throw new IllegalArgumentException("--driver: \"" + driver + "\" (expected: roster or nacos)");
    }
    String target = given.get("target");
    if (target != null && !target.matches("[^\\s:]+:\\d{1,5}")) {
      throw new IllegalArgumentException("--target: \"" + target + "\" (expected: host:port)");
    }
    if (driver.equals("nacos") && target == null) {
      throw new IllegalArgumentException(
          "--driver nacos needs --target host:8848 (a running Nacos 2.x server; the bench starts only Roster servers)");
    }
    String mass = given.getOrDefault("roster-mass", "raw");
    if (!mass.equals("raw") && !mass.equals("sdk")) {
      throw new IllegalArgumentException("--roster-mass: \"" + mass + "\" (expected: raw or sdk)");
    }
    String peerTls = given.getOrDefault("peer-tls", "on");
    if (!peerTls.equals("on") && !peerTls.equals("off")) {
      throw new IllegalArgumentException("--peer-tls: \"" + peerTls + "\" (expected: on or off)");
    }
    Set<String> workloads = new LinkedHashSet<>();
    String list = given.getOrDefault("workloads", "all");
    for (String w : list.split(",", -1)) {
      String t = w.trim().toLowerCase(Locale.ROOT);
      if (t.equals("all")) {
        workloads.addAll(ALL_WORKLOADS);
      } else if (ALL_WORKLOADS.contains(t) || NAMED_WORKLOADS.contains(t)) {
        workloads.add(t);
      } else {
        throw new IllegalArgumentException("--workloads: \"" + t + "\" (expected: all or a comma-separated subset of "
            + String.join(",", ALL_WORKLOADS) + "," + String.join(",", NAMED_WORKLOADS) + ")");
      }
    }
    if (target != null || !driver.equals("roster")) {
      List<String> asked = new ArrayList<>();
      for (String w : list.split(",", -1)) {
        asked.add(w.trim().toLowerCase(Locale.ROOT));
      }
      for (String w : concat(CLUSTER_WORKLOADS, NAMED_WORKLOADS)) {
        if (asked.contains(w)) {
          throw new IllegalArgumentException("--workloads: " + w + " starts its own Roster servers "
              + "(expected: no --target and --driver roster for " + String.join(",", concat(CLUSTER_WORKLOADS,
              NAMED_WORKLOADS)) + ")");
        }
      }
      workloads.removeAll(CLUSTER_WORKLOADS);
    }
    if (target != null) {
      workloads.remove("startup");
      workloads.remove("first");
      workloads.remove("nacosfirst");
      workloads.remove("warmkill");
      workloads.remove("slowhttp");
      workloads.remove("admin");
      workloads.remove("persist");
      workloads.remove("probe");
      workloads.remove("logins");
    }
    if (tls || auth) {
      String flag = tls ? "--tls" : "--auth";
      if (target != null || !driver.equals("roster")) {
        throw new IllegalArgumentException(flag + ": the bench sets up the server it starts (expected: no --target, "
            + "--driver roster)");
      }
      List<String> plaintextOnly = List.of("startup", "first", "warmkill", "slowhttp", "admin", "persist", "probe", "w10", "w11",
          "w12", "logins", "elections");
      for (String w : list.split(",", -1)) {
        if (plaintextOnly.contains(w.trim().toLowerCase(Locale.ROOT))) {
          throw new IllegalArgumentException("--workloads: " + w.trim() + " starts its servers without TLS or auth "
              + "(expected: w1..w9 with " + flag + ")");
        }
      }
      workloads.removeAll(plaintextOnly);
    }
    Map<String, Integer> sizes = new LinkedHashMap<>();
    for (Map.Entry<String, String[]> e : SIZES.entrySet()) {
      String raw = given.getOrDefault(e.getKey(), quick ? e.getValue()[1] : e.getValue()[0]);
      int v;
      try {
        v = Integer.parseInt(raw);
      } catch (NumberFormatException ex) {
        throw new IllegalArgumentException("--" + e.getKey() + ": \"" + raw + "\" (expected: a positive integer)");
      }
      int least = OPTIONAL_SIZES.contains(e.getKey()) ? 0 : 1;
      if (v < least) {
        throw new IllegalArgumentException("--" + e.getKey() + ": " + v + " (expected: " + (least == 0
            ? "0 (none) or more" : "a positive integer") + ")");
      }
      sizes.put(e.getKey(), v);
    }
    Set<String> known = new LinkedHashSet<>(SIZES.keySet());
    known.addAll(List.of("driver", "target", "server-jar", "baseline-jar", "server-jvm", "roster-mass", "peer-tls",
        "workloads", "out"));
    for (String name : given.keySet()) {
      if (!known.contains(name)) {
        throw new IllegalArgumentException("--" + name + ": unknown flag (see --help)");
      }
    }
    String serverJar = given.getOrDefault("server-jar", "server/target/roster-server.jar");
    String serverJvm = given.containsKey("server-jvm") ? given.get("server-jvm") : shippedJvmOptions(serverJar) + " -Xmx1g";
    List<String> jvm = new ArrayList<>();
    for (String s : serverJvm.trim().split("\\s+", -1)) {
      if (!s.isEmpty()) {
        jvm.add(s);
      }
    }
    String baselineJar = given.get("baseline-jar");
    if (baselineJar != null && !Files.isRegularFile(Path.of(baselineJar))) {
      throw new IllegalArgumentException("--baseline-jar: \"" + baselineJar + "\" (expected: a server jar file)");
    }
    return new Args(quick, tls, auth, driver, target, serverJar, baselineJar,
        List.copyOf(jvm), mass, peerTls.equals("on"), workloads, given.getOrDefault("out", "bench/target/bench-results.md"), sizes);
  }

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }

  /**
   * The flags `make run` gives the server: server/jvm.options next to the jar's target/
   * directory. Empty when the file is not there; the report prints the flags the server really
   * ran with either way.
   */
  static String shippedJvmOptions(String serverJar) {
    Path target = Path.of(serverJar).toAbsolutePath().getParent();
    if (target == null || target.getParent() == null) {
      return "";
    }
    Path options = target.getParent().resolve("jvm.options");
    try {
      return Files.readString(options).trim();
    } catch (IOException e) {
      return "";
    }
  }

  /** The --help text. */
  public static String help() {
    StringBuilder sb = new StringBuilder("""
        Usage: java -jar roster-bench.jar [flags]        load generator (workloads)
               java -jar roster-bench.jar jmh [JMH args]  microbenchmarks

          --driver roster|nacos    client library (default roster)
          --target host:port       an existing server; without it a Roster server is started
                                   from --server-jar for each workload (its CPU and RSS are reported)
          --server-jar PATH        default server/target/roster-server.jar
          --baseline-jar PATH      elections: another build's server jar, whose clusters run beside --server-jar's
                                   at the same time (its rows say "before")
          --server-jvm "FLAGS"     JVM flags of the started server (default: server/jvm.options as make run, plus -Xmx1g)
          --roster-mass raw|sdk    W1/W5/W8 clients: raw Connect streams on a shared event loop (default) or SDK clients
          --peer-tls on|off        W10-W12: the cluster's peer ports with mutual TLS (default on, a throwaway CA
                                   per cluster) or --peer-tls off (plaintext), to measure what TLS costs
          --workloads LIST         all, or some of startup,first,warmkill,w1,...,w12,slowhttp,admin,persist,probe (w10-w12: a local 3-node
                                   cluster each, roster driver only; left out of "all" with --target); elections only
                                   when named (three-member clusters beside a CPU hog, for minutes), nacosfirst only
                                   when named (fresh nacos-client JVMs, a diagnosis of a first registration)
          --quick                  small sizes (make bench QUICK=1)
          --tls                    the started server on TLS (a throwaway CA and certificate under the log
                                   directory), every client trusting it; W1-W9 only
          --auth                   the started server with an auth file (one token, admin@*, under the log
                                   directory), every client presenting it; W1-W9 only
          --out FILE               markdown results (default bench/target/bench-results.md)
        Sizes (full / quick default):
        """);
    SIZES.forEach((k, v) -> sb.append(String.format("  --%-22s %6s / %-6s %s%n", k, v[0], v[1], v[2])));
    return sb.toString();
  }
}
