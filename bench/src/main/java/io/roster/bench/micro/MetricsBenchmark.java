package io.roster.bench.micro;

import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.roster.server.auth.Authenticator;
import io.roster.server.metrics.ServerMetrics;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.push.PushEngine;
import io.roster.server.registry.Registry;
import io.roster.server.registry.WarmUp;
import io.roster.server.session.RequestCounters;
import io.roster.server.session.SessionLimits;
import io.roster.server.session.SessionManager;
import io.roster.server.time.SystemScheduler;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the metrics cost (docs/observability.md): counting one request as its handler does, a
 * latency histogram's observation (the change-to-ack and commit histograms' kind), and a whole
 * scrape of a server whose registry holds {@code services} services of one instance each over 20
 * namespaces. Single-threaded.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class MetricsBenchmark {

  @Param({"10000"})
  public int services;

  private final RequestCounters requests = new RequestCounters();
  private final CompletableFuture<Void> applied = CompletableFuture.completedFuture(null);
  private final Histogram histogram = Histogram.builder().name("bench_seconds").classicOnly()
      .classicUpperBounds(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
      .register(new PrometheusRegistry());
  private SystemScheduler scheduler;
  private ServerMetrics metrics;
  private double seconds;

  @Setup(Level.Trial)
  public void setUp() {
    scheduler = new SystemScheduler("bench", 1);
    Registry registry = new Registry(SystemScheduler::wallClockMicros);
    for (int s = 0; s < services; s++) {
      registry.register(Owner.session("", "owner-" + (s % 100)), ServiceKey.of("ns-" + (s % 20), "DEFAULT_GROUP",
          "svc-" + s), RegistryBenchmark.instance("10.0." + (s / 250 % 250) + "." + (s % 250 + 1), 8080));
    }
    PushEngine engine = new PushEngine(registry, scheduler, Duration.ofMillis(100));
    SessionManager sessions = new SessionManager(registry, engine, scheduler, Duration.ofSeconds(3),
        SessionLimits.of(10_000, 10_000));
    metrics = new ServerMetrics(new ServerMetrics.Sources("bench", registry, sessions, engine,
        WarmUp.warm(scheduler), Authenticator.off(), () -> 0, () -> 0, () -> 0, null, SystemScheduler::wallClockMicros,
        () -> new io.roster.server.probe.HealthProbes.Counts(0, 0, 0, 0)));
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    scheduler.close();
  }

  /** One request counted as the session handler counts a register: by protocol, type and result. */
  @Benchmark
  public void countRequest() {
    requests.count(RequestCounters.Protocol.ROSTER, "register", RequestCounters.OK);
  }

  /**
   * The same through {@code track}, for a request already applied (a standalone register), with
   * its duration observed as the server observes it.
   */
  @Benchmark
  public Object trackAppliedRequest() {
    return requests.track(RequestCounters.Protocol.ROSTER, "register", applied, requests.start());
  }

  /** One observation of a latency histogram with the server's buckets. */
  @Benchmark
  public void observeLatency() {
    seconds = seconds > 1 ? 0.0001 : seconds * 1.7 + 0.0001;
    histogram.observe(seconds);
  }

  /** A whole scrape in Prometheus's text format (the JVM's metrics included). */
  @Benchmark
  public int scrape() {
    return metrics.scrape(null).text().length();
  }
}
