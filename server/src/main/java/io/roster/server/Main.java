package io.roster.server;

import io.grpc.netty.shaded.io.netty.util.ResourceLeakDetector;
import io.roster.server.cluster.PeerTls;
import io.roster.server.config.ServerConfig;
import io.roster.server.tls.ClusterPki;
import io.roster.server.time.Stopwatch;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar roster-server.jar [--option value]...}; {@code --help} lists the options.
 * {@code java -jar roster-server.jar pki ...} makes a cluster's peer TLS files instead ({@link
 * ClusterPki}); {@code check} and {@code repair --data-dir DIR} check or repair a data directory
 * ({@link io.roster.server.store.DataDirCommand}).
 */
public final class Main {

  static final String LEAK_DETECTION_PROPERTY = "io.grpc.netty.shaded.io.netty.leakDetection.level";

  private static final String EXIT_WHEN_READY = "--exit-when-ready";

  private Main() {}

  public static void main(String[] args) throws InterruptedException {
    if (args.length > 0 && args[0].equals("auth")) {
      System.exit(io.roster.server.auth.AuthCommand.main(Arrays.asList(args).subList(1, args.length), System.out,
          System.err));
      return;
    }
    if (args.length > 0 && (args[0].equals("check") || args[0].equals("repair"))) {
      System.exit(io.roster.server.store.DataDirCommand.main(Arrays.asList(args), System.out, System.err));
      return;
    }
    Stopwatch started = Stopwatch.start();
    if (args.length > 0 && args[0].equals("pki")) {
      System.exit(ClusterPki.run(Arrays.copyOfRange(args, 1, args.length), System.out, System.err));
      return;
    }
    if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
      System.out.print(ServerConfig.usage());
      return;
    }
    boolean exitWhenReady = Arrays.asList(args).contains(EXIT_WHEN_READY);
    String[] options = Arrays.stream(args).filter(a -> !a.equals(EXIT_WHEN_READY)).toArray(String[]::new);
    ServerConfig config;
    try {
      config = ServerConfig.parse(options, System.getenv());
      PeerTls.check(config); // the files named, read now: a bad one stops the server before it starts
    } catch (IllegalArgumentException e) {
      System.err.println("roster: " + e.getMessage());
      System.exit(2);
      return;
    }
    LogSetup.configure(config.logDir(), config.resolvedAuditLog());
    disableLeakDetectionUnlessAsked();
    if (config.clustered()) {
      smallRaftBufferPools();
    }
    Logger log = LoggerFactory.getLogger(Main.class);
    // Primed on a thread of its own while the server is built; the port opens once it is done.
    CompletableFuture<Duration> primed = Primer.startPriming();
    RosterServer server;
    try {
      server = RosterServer.start(config, primed::join);
    } catch (RuntimeException e) {
      log.error("Cannot start: {}", e.getMessage(), e);
      LogSetup.shutdown(); // the line must reach a redirected output before the exit
      System.exit(1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.close();
      LogSetup.shutdown();
    }, "roster-shutdown"));
    log.info("Roster {} {} on {}:{} (started in {} ms, priming the request paths meanwhile in {} ms; keepalive "
        + "{}/{}, push window {})", RosterServer.VERSION,
        server.cluster() == null ? "serving" : "listening, SERVING once caught up with the cluster's log,",
        config.host(), server.port(), started.elapsed().toMillis(), primed.join().toMillis(),
        ServerConfig.formatDuration(config.sessions().keepaliveTime()), ServerConfig.formatDuration(config.sessions().keepaliveTimeout()),
        ServerConfig.formatDuration(config.sessions().pushWindow()));
    warnUnlessCrashOnly(log);
    if (exitWhenReady) {
      server.close();
      LogSetup.shutdown();
      return;
    }
    server.awaitTermination();
  }

  /**
   * A JVM out of memory loses threads at random (event loops, the push thread) and lingers
   * half-alive: port open, health failing, SIGTERM ignored. Roster is crash-only: it ships with
   * {@code -XX:+ExitOnOutOfMemoryError} (server/jvm.options, used by {@code make run}); the flag
   * cannot be set from inside the JVM, so a launch without it is told.
   */
  private static void warnUnlessCrashOnly(Logger log) {
    if (!ManagementFactory.getRuntimeMXBean().getInputArguments().contains("-XX:+ExitOnOutOfMemoryError")) {
      log.warn("Started without -XX:+ExitOnOutOfMemoryError: if memory runs out this process will linger "
          + "half-alive instead of exiting for a restart (server/jvm.options has the shipped flags)");
    }
  }

  /**
   * The Raft traffic (Ratis' own shaded Netty) is a few connections to the other members: one
   * pooled arena each for direct and heap buffers is plenty, and saves the chunks that one
   * arena per core would hold. Set before Ratis loads Netty; a
   * -D on the command line wins.
   */
  private static void smallRaftBufferPools() {
    for (String kind : new String[] {"numDirectArenas", "numHeapArenas"}) {
      String key = "org.apache.ratis.thirdparty.io.netty.allocator." + kind;
      if (System.getProperty(key) == null) {
        System.setProperty(key, "1");
      }
    }
  }

  /**
   * Netty's leak detector samples one buffer in 128 and records a stack trace for it: about
   * 1.5 % of the CPU of a busy server (docs/benchmarks.md), for a bug report nobody reads in
   * production. Off unless {@value #LEAK_DETECTION_PROPERTY} is set.
   */
  private static void disableLeakDetectionUnlessAsked() {
    if (System.getProperty(LEAK_DETECTION_PROPERTY) == null) {
      ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
      // The cluster's Raft traffic runs on Ratis's own (shaded) Netty.
      org.apache.ratis.thirdparty.io.netty.util.ResourceLeakDetector.setLevel(
          org.apache.ratis.thirdparty.io.netty.util.ResourceLeakDetector.Level.DISABLED);
    }
  }
}
