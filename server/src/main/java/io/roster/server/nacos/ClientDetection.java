package io.roster.server.nacos;

import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Finds Nacos clients that went silent (a frozen process, a partition without a TCP reset) with
 * the server's keepalive settings, the way a Nacos server does with its {@code
 * ClientDetectionRequest} (nacos-reference.md §2.4) but on Roster's bound: a connection from
 * which nothing (a unary request, a stream message) has arrived for {@code probeAfter} (
 * {@code --keepalive-time}) is sent a {@code ClientDetectionRequest}, which a live client
 * answers at once; one silent for {@code probeAfter + answerWithin} ({@code
 * --keepalive-timeout}) is ended, and its instances go. A live idle client is rarely probed: it
 * sends a {@code HealthCheckRequest} itself after 5 s without traffic.
 *
 * <p>Thread-safe; one scheduled check per connection at a time, on the scheduler.
 */
final class ClientDetection {

  private final Scheduler scheduler;
  private final Duration probeAfter;
  private final Duration endAfter;
  private final AtomicLong probes = new AtomicLong();

  ClientDetection(Scheduler scheduler, Duration probeAfter, Duration answerWithin) {
    this.scheduler = scheduler;
    this.probeAfter = probeAfter;
    this.endAfter = probeAfter.plus(answerWithin);
  }

  /** The scheduler's clock, for {@link NacosConnection#heard}. */
  long now() {
    return scheduler.nanoTime();
  }

  /** Starts watching a registered connection; the watch stops when it closes. */
  void watch(NacosConnection c) {
    scheduler.schedule(() -> check(c), probeAfter);
  }

  private void check(NacosConnection c) {
    if (c.isClosed()) {
      return;
    }
    long silent = scheduler.nanoTime() - c.lastHeardNanos();
    if (silent >= endAfter.toNanos()) {
      c.close("silent client: nothing heard for " + Duration.ofNanos(silent).toMillis() + " ms (probed after "
          + probeAfter.toMillis() + " ms, --keepalive-time; no answer within " + endAfter.minus(probeAfter).toMillis()
          + " ms, --keepalive-timeout)");
      return;
    }
    if (silent >= probeAfter.toNanos()) {
      c.probe("detect-" + probes.incrementAndGet());
      scheduler.schedule(() -> check(c), Duration.ofNanos(endAfter.toNanos() - silent));
    } else {
      scheduler.schedule(() -> check(c), Duration.ofNanos(probeAfter.toNanos() - silent));
    }
  }
}
