package io.roster.server.nacos;

import io.roster.server.time.Scheduler;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@value #LOGGER} logger: at DEBUG, one line per step of a Nacos connection's traffic, each
 * with the wall-clock time in microseconds, so that a client's request can be followed through
 * the server (docs/operations.md, "Tracing a Nacos connection"):
 * {@code conn=ID step=STEP type=TYPE [rev=R] at=MICROS}. The steps: {@code transport} (the
 * HTTP/2 transport is up), {@code received} and {@code answered} (a unary request, or a
 * stream's {@code ConnectionSetupRequest}), {@code applied} (a registration's change is in the
 * registry), {@code pushed} (a {@code NotifySubscriberRequest} written to the stream) and
 * {@code acked} (its {@code NotifySubscriberResponse} read).
 *
 * <p>Off by default; at INFO and above it costs one level check per step. The times come from
 * the scheduler's monotonic clock, anchored to its wall clock once, so that the steps of one
 * server are in order and comparable to a client's wall clock on the same machine within a
 * millisecond.
 *
 * <p>Thread-safe: stateless but for the anchor, set once.
 */
final class NacosTrace {

  /** The logger's name: {@code PUT /nacos/v1/ns/operator/log?logName=roster.trace.nacos&logLevel=DEBUG}. */
  static final String LOGGER = "roster.trace.nacos";

  private static final Logger log = LoggerFactory.getLogger(LOGGER);

  private final Scheduler scheduler;
  private final long anchorMicros;
  private final long anchorNanos;

  NacosTrace(Scheduler scheduler) {
    this.scheduler = scheduler;
    this.anchorNanos = scheduler.nanoTime();
    this.anchorMicros = scheduler.currentTimeMillis() * 1000;
  }

  /** Whether the steps are logged (the logger is at DEBUG or finer). */
  boolean on() {
    return log.isDebugEnabled();
  }

  /** Logs a step of connection {@code conn}'s message of type {@code type}. */
  void step(@Nullable String conn, String step, String type) {
    if (log.isDebugEnabled()) {
      log.debug("conn={} step={} type={} at={}", conn, step, type, micros());
    }
  }

  /** Logs a step of the push of revision {@code rev} on connection {@code conn}. */
  void push(String conn, String step, String rev) {
    if (log.isDebugEnabled()) {
      log.debug("conn={} step={} type=NotifySubscriberRequest rev={} at={}", conn, step, rev, micros());
    }
  }

  /** Now, in microseconds since the epoch, from the scheduler's monotonic clock. */
  long micros() {
    return anchorMicros + (scheduler.nanoTime() - anchorNanos) / 1000;
  }
}
