package io.roster.client.internal;

import io.roster.client.internal.SerialContext.Timer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The poll fallback: per subscribed service, every interval, asks a server for the state with
 * the cached checksum ({@code not_modified} costs nothing) and hands a changed state to the
 * cache, which ignores it unless its revision is newer. After a failure the wait doubles, up to
 * the maximum, and starts over after a success. Stops when the subscription is deactivated.
 * Its timers run on the injected scheduler and its state changes in the client's
 * {@link SerialContext}; thread-safe.
 */
final class Poller {

  private static final Logger log = LoggerFactory.getLogger(Poller.class);

  /** Where polls go and where their answers land. */
  interface Target {

    /** Queries the service; {@code knownChecksum} is empty when nothing is cached. */
    CompletableFuture<QueryAnswer> query(ServiceKey key, String knownChecksum);

    /** Applies a successful answer (not called for {@code not_modified}). */
    void apply(Subscription subscription, QueryAnswer answer);
  }

  private final ScheduledExecutorService scheduler;
  private final Duration interval;
  private final Duration maxBackoff;
  private final SerialContext context;
  private final Target target;

  Poller(ScheduledExecutorService scheduler, Duration interval, Duration maxBackoff,
      SerialContext context, Target target) {
    this.scheduler = scheduler;
    this.interval = interval;
    this.maxBackoff = maxBackoff;
    this.context = context;
    this.target = target;
  }

  /**
   * Schedules the first poll of a new subscription one interval from now. In the context; its
   * polls stop when it is deactivated.
   */
  void start(Subscription sub) {
    Polling polling = new Polling(sub);
    sub.onDeactivate(() -> context.execute(polling::stop));
    polling.schedule(interval.toNanos());
  }

  /** The wait after {@code failures} consecutive failures: interval * 2^failures, capped. */
  long delayNanos(int failures) {
    long base = interval.toNanos();
    long max = maxBackoff.toNanos();
    if (failures <= 0) {
      return base;
    }
    if (failures >= 62 || base > (max >> Math.min(failures, 62))) {
      return max;
    }
    return Math.min(max, base << failures);
  }

  /** The polls of one subscription: this poller's own state, changed in the context. */
  private final class Polling {
    private final Subscription sub;
    private @Nullable Timer timer;
    private int failures;
    private boolean stopped;

    Polling(Subscription sub) {
      this.sub = sub;
    }

    void schedule(long delayNanos) {
      if (stopped || !sub.isActive()) {
        return;
      }
      timer = context.schedule(this::poll, delayNanos, TimeUnit.NANOSECONDS, scheduler);
    }

    void stop() {
      stopped = true;
      Timer.cancel(timer);
      timer = null;
    }

    /** The poll is due: it is sent from here, and answered on any thread. */
    private void poll() {
      timer = null;
      if (stopped || !sub.isActive()) {
        return;
      }
      ServiceSnapshot cached = sub.snapshot();
      String checksum = cached == null ? "" : cached.checksum();
      CompletableFuture<QueryAnswer> answer;
      try {
        answer = target.query(sub.key(), checksum);
      } catch (RuntimeException e) {
        answer = CompletableFuture.failedFuture(e);
      }
      answer.whenComplete((response, error) -> {
        if (error == null && !response.notModified()) {
          try {
            target.apply(sub, response);
          } catch (RuntimeException e) {
            error = e;
          }
        }
        Throwable failure = error;
        context.execute(() -> answered(failure));
      });
    }

    private void answered(Throwable failure) {
      if (failure == null) {
        failures = 0;
      } else {
        failures++;
        log.debug("Poll of {} failed ({} in a row): {}", sub.key(), failures,
            ProtoMapper.unwrap(failure).toString());
      }
      schedule(delayNanos(failures));
    }
  }
}
