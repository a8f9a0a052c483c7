package io.roster.bench;

import io.roster.bench.driver.Driver;
import io.roster.bench.driver.Drivers;
import io.roster.bench.driver.RosterDriver;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Entry point of {@code roster-bench.jar}: the workloads (default) or, with first argument
 * {@code jmh}, the JMH microbenchmarks. Prints each workload's result as it finishes and writes
 * a markdown report (default {@code bench/target/bench-results.md}).
 */
public final class BenchMain {

  private BenchMain() {}

  public static void main(String[] argv) throws Exception {
    if (argv.length > 0 && argv[0].equals("jmh")) {
      org.openjdk.jmh.Main.main(Arrays.copyOfRange(argv, 1, argv.length));
      return;
    }
    if (Arrays.asList(argv).contains("--help")) {
      System.out.print(Args.help());
      return;
    }
    Args args;
    try {
      args = Args.parse(argv);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    System.exit(run(args, argv) ? 0 : 1);
  }

  static boolean run(Args args, String[] argv) throws IOException {
    Path jar = Path.of(args.serverJar);
    Path out = Path.of(args.out);
    Path logDir = out.toAbsolutePath().getParent().resolve("bench-logs");
    List<Result> results = new ArrayList<>();
    String serverFlags = null;
    boolean ok = true;
    LocalServer.Tls tls = args.tls ? new LocalServer.Tls(Files.createDirectories(logDir.resolve("tls"))) : null;
    Path authDir = Files.createDirectories(logDir.resolve("auth"));
    Path authFile = authDir.resolve("auth.json");
    Files.deleteIfExists(authFile);
    String token = args.auth ? LocalServer.authFile(authDir, authFile) : "";
    long start = System.nanoTime();
    for (String w : args.workloads) {
      long t0 = System.nanoTime();
      Result r;
      if (w.equals("startup")) {
        r = Workloads.startup(args, jar, logDir);
      } else if (w.equals("first") || w.equals("nacosfirst") || w.equals("warmkill") || w.equals("slowhttp") || w.equals("admin")
          || w.equals("persist") || w.equals("probe") || w.equals("logins") || w.equals("elections")) {
        try {
          r = switch (w) {
            case "first" -> FirstRequest.run(args, jar, logDir);
            case "nacosfirst" -> NacosFirst.run(args, jar, logDir);
            case "warmkill" -> WarmUpKill.run(args, jar, logDir);
            case "slowhttp" -> SlowHttp.run(args, jar, logDir);
            case "persist" -> Persistence.run(args, jar, logDir);
            case "probe" -> Probing.run(args, jar, logDir);
            case "logins" -> LoginFlood.run(args, jar, logDir);
            case "elections" -> Elections.run(args, jar, logDir);
            default -> AdminPages.run(args, jar, logDir);
          };
        } catch (Exception | Error e) {
          ok = false;
          r = new Result(w, w + " failed").row("error", String.valueOf(e));
          e.printStackTrace();
        }
      } else if (Args.CLUSTER_WORKLOADS.contains(w)) {
        try {
          r = ClusterWorkloads.run(args, jar, logDir, w);
        } catch (Exception | Error e) {
          ok = false;
          r = new Result(w, w + " failed").row("error", String.valueOf(e));
          e.printStackTrace();
        }
      } else {
        LocalServer server = null;
        Driver driver = null;
        try {
          if (args.localServer()) {
            server = LocalServer.start(jar, args.serverJvm, logDir, w, tls, args.auth ? authFile : null);
            if (serverFlags == null) {
              serverFlags = server.vmFlags();
            }
          }
          String target = server != null ? server.address() : args.target;
          driver = Drivers.create(args.driver, target,
              args.rosterMass.equals("sdk") ? RosterDriver.MassMode.SDK : RosterDriver.MassMode.RAW,
              tls == null ? null : tls.ca, token);
          r = new Workloads(args, driver, target, server).run(w);
        } catch (Exception | Error e) {
          ok = false;
          r = new Result(w, w + " failed").row("error", String.valueOf(e));
          e.printStackTrace();
        } finally {
          if (driver != null) {
            driver.close();
          }
          if (server != null) {
            server.close();
          }
        }
      }
      r.note(String.format("wall time %.1f s", (System.nanoTime() - t0) / 1e9));
      results.add(r);
      System.out.println(text(r));
      System.out.flush();
    }
    String md = markdown(args, argv, results, serverFlags, (System.nanoTime() - start) / 1e9);
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, md);
    System.out.println("Report: " + out);
    return ok;
  }

  static String text(Result r) {
    StringBuilder sb = new StringBuilder("== ").append(r.title).append('\n');
    for (Result.Row row : r.rows) {
      sb.append(String.format("  %-46s %s", row.metric(), row.value()));
      if (row.met() != null) {
        sb.append(String.format("   [target %s: %s]", row.target(), row.met() ? "met" : "MISSED"));
      }
      sb.append('\n');
    }
    r.notes.forEach(n -> sb.append("  - ").append(n).append('\n'));
    return sb.toString();
  }

  static String markdown(Args args, String[] argv, List<Result> results, String serverFlags, double seconds) {
    StringBuilder sb = new StringBuilder();
    sb.append("# Roster bench results\n\n");
    sb.append(String.format("- run: %s, %.0f s, driver `%s`, %s%n",
        LocalDateTime.now(java.time.ZoneId.systemDefault()).format(DateTimeFormatter.ISO_LOCAL_DATE_TIME), seconds, args.driver,
        args.localServer() ? "local server from " + args.serverJar + (args.tls ? ", on TLS (--tls)" : "") + (args.auth ? ", with auth (--auth)" : "") : "target " + args.target));
    sb.append(String.format("- machine: %s %s, %d cores, %s MiB RAM, Java %s (%s)%n",
        System.getProperty("os.name"), System.getProperty("os.version"),
        Runtime.getRuntime().availableProcessors(), memTotalMib(), System.getProperty("java.version"),
        System.getProperty("java.vm.name")));
    sb.append("- command: `java ").append(String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()))
        .append(" -jar roster-bench.jar ").append(String.join(" ", argv)).append("`\n");
    if (serverFlags != null) {
      sb.append("- server JVM: `").append(serverFlags).append("`\n");
    }
    sb.append("\n| workload | metric | value | target | |\n|---|---|---|---|---|\n");
    for (Result r : results) {
      for (Result.Row row : r.rows) {
        sb.append("| ").append(r.id).append(" | ").append(row.metric()).append(" | ").append(row.value())
            .append(" | ").append(row.target()).append(" | ")
            .append(row.met() == null ? "" : row.met() ? "met" : "**missed**").append(" |\n");
      }
    }
    sb.append('\n');
    for (Result r : results) {
      sb.append("- **").append(r.id).append("** ").append(r.title).append(": ")
          .append(String.join("; ", r.notes)).append('\n');
    }
    return sb.toString();
  }

  private static String memTotalMib() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemTotal:")) {
          return Long.toString(Long.parseLong(line.replaceAll("\\D+", "")) / 1024);
        }
      }
    } catch (IOException | RuntimeException ignored) {
      // not Linux
    }
    return "?";
  }
}
