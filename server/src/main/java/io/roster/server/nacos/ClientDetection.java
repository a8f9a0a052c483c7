package io.roster.server.nacos;

import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Finds Nacos clients that went silent (a frozen process, a partition without a TCP reset) with
 * the server's keepalive settings, the way a Nacos server does with its {@code
 * ClientDetectionRequest} but on Roster's bound (decision 42): a connection from
 * which nothing (a unary request, a stream message) has arrived for {@code probeAfter}
 * ({@code --keepalive-time}) is sent a {@code ClientDetectionRequest}, which a live client
 * answers at once; one silent for {@code probeAfter + answerWithin} ({@code
 * --keepalive-timeout}) whose probe has gone unanswered for at least {@code answerWithin} is
 * ended, and its instances go. A connection is never ended without such a probe: after the
 * server itself was frozen or starved (every connection then looks silent), each gets a probe
 * and {@code answerWithin} to answer it. A live idle client is rarely probed: it sends a {@code
 * HealthCheckRequest} itself after 5 s without traffic.
 *
 * <p>Thread-safe; one scheduled check per connection at a time, on the scheduler.
 */
final class ClientDetection {

  /** What the detection needs of a connection ({@link NacosConnection}). */
  interface Watched {
    /** When something last arrived from the client, in the scheduler's nanoseconds. */
    long lastHeardNanos();

    boolean isClosed();

    /** Sends a {@code ClientDetectionRequest}. */
    void probe(String requestId);

    /** Ends the connection (its instances go). */
    void close(String reason);
  }

  private final Scheduler scheduler;
  private final Duration probeAfter;
  private final Duration answerWithin;
  private final Duration endAfter;
  private final AtomicLong probes = new AtomicLong();

  ClientDetection(Scheduler scheduler, Duration probeAfter, Duration answerWithin) {
    this.scheduler = scheduler;
    this.probeAfter = probeAfter;
    this.answerWithin = answerWithin;
    this.endAfter = probeAfter.plus(answerWithin);
  }

  /** The scheduler's clock, for {@link NacosConnection#heard}. */
  long now() {
    return scheduler.nanoTime();
  }

  /** Starts watching a registered connection; the watch stops when it closes. */
  void watch(Watched c) {
    new Watch(c).schedule(probeAfter.toNanos());
  }

  /** One connection's watch: its checks run one after the other, never two at once. */
  private final class Watch {
    private final Watched c;
    /** When the last probe went out; meaningful only if {@link #probed}. */
    private long probedAt;
    private boolean probed;

    Watch(Watched c) {
      this.c = c;
    }

    void schedule(long delayNanos) {
      scheduler.schedule(this::check, Duration.ofNanos(Math.max(0, delayNanos)));
    }

    private void check() {
      if (c.isClosed()) {
        return;
      }
      long now = scheduler.nanoTime();
      long heard = c.lastHeardNanos();
      long silent = now - heard;
      boolean unanswered = probed && probedAt - heard > 0;
      if (unanswered && silent >= endAfter.toNanos() && now - probedAt >= answerWithin.toNanos()) {
        c.close("silent client: nothing heard for " + Duration.ofNanos(silent).toMillis() + " ms, and no answer to a "
            + "ClientDetectionRequest within " + answerWithin.toMillis() + " ms (--keepalive-time "
            + probeAfter.toMillis() + " ms + --keepalive-timeout)");
        return;
      }
      if (unanswered) {
        schedule(Math.max(endAfter.toNanos() - silent, answerWithin.toNanos() - (now - probedAt)));
      } else if (silent >= probeAfter.toNanos()) {
        probed = true;
        probedAt = now;
        c.probe("detect-" + probes.incrementAndGet());
        schedule(Math.max(endAfter.toNanos() - silent, answerWithin.toNanos()));
      } else {
        schedule(probeAfter.toNanos() - silent);
      }
    }
  }
}
