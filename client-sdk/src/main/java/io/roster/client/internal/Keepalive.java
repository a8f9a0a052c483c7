package io.roster.client.internal;

import io.roster.client.internal.SerialContext.Timer;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keepalive of the active session: pings it when nothing was sent or heard for its ping
 * interval (the lesser of the client's keepalive time and the server's), and gives it up when no
 * frame at all arrives within the keepalive timeout of a ping. One per active session, started
 * when it becomes active and stopped when it stops being so; the connection manager decides what
 * a silent session means ({@code onSilent}).
 *
 * <p>Its timer runs on the injected scheduler and its readings come from the injected ticker.
 * All of it runs in the client's {@link SerialContext}; not thread-safe otherwise.
 */
final class Keepalive {

  private static final Logger log = LoggerFactory.getLogger(Keepalive.class);

  private final Session session;
  private final SerialContext context;
  private final ScheduledExecutorService scheduler;
  private final Ticker ticker;
  private final Duration timeout;
  private final Runnable onSilent;
  private final Runnable onTick;

  private @Nullable Timer timer;
  private boolean stopped;
  private boolean pingOutstanding;
  private long pingSentAtNanos;
  private long framesAtPing;

  /**
   * @param onSilent runs in the context when a ping went unanswered for {@code timeout}; the
   *     keepalive has stopped then
   * @param onTick runs in the context at every look (about once a ping interval) while it runs
   */
  Keepalive(Session session, SerialContext context, ScheduledExecutorService scheduler, Ticker ticker,
      Duration timeout, Runnable onSilent, Runnable onTick) {
    this.session = session;
    this.onTick = onTick;
    this.context = context;
    this.scheduler = scheduler;
    this.ticker = ticker;
    this.timeout = timeout;
    this.onSilent = onSilent;
  }

  /** The session it keeps alive. */
  Session session() {
    return session;
  }

  /** Looks again one ping interval from now. */
  void start() {
    schedule(session.pingIntervalNanos());
  }

  /** No more pings nor checks. */
  void stop() {
    stopped = true;
    Timer.cancel(timer);
  }

  private void tick() {
    if (stopped) {
      return;
    }
    onTick.run();
    long now = ticker.nanoTime();
    long timeoutNanos = timeout.toNanos();
    if (pingOutstanding) {
      if (session.framesReceived() > framesAtPing) {
        pingOutstanding = false;
      } else {
        long waited = now - pingSentAtNanos;
        if (waited >= timeoutNanos) {
          log.info("Roster server {} sent nothing within {} ms of a ping; reconnecting",
              session.address, timeout.toMillis());
          stopped = true;
          onSilent.run();
          return;
        }
        schedule(timeoutNanos - waited);
        return;
      }
    }
    // Idle in either direction: nothing heard (is the server there?) or nothing said (the
    // server would take the silence for a dead client).
    long interval = session.pingIntervalNanos();
    long idle = now - Math.min(session.lastReceivedNanos(), session.lastSentNanos());
    if (idle >= interval) {
      pingOutstanding = true;
      pingSentAtNanos = now;
      framesAtPing = session.framesReceived();
      session.send(new Request.Ping());
      // Back by the next ping time or the timeout, whichever comes first.
      schedule(Math.min(timeoutNanos, interval));
    } else {
      schedule(interval - idle);
    }
  }

  private void schedule(long delayNanos) {
    timer = context.schedule(this::tick, delayNanos, TimeUnit.NANOSECONDS, scheduler);
  }
}
