package io.roster.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Marker;

/**
 * Rate-limits repeated warnings and errors: per logger and message pattern, the first {@link
 * #setAllowed allowed} of each {@link #setWindowSeconds window} are logged, the rest are
 * counted, and the next one logged after the window says how many were suppressed. A client
 * that provokes the same warning thousands of times (bad frames, resets, gRPC stream errors)
 * then costs a few lines, not a flooded disk or console. INFO and below pass untouched.
 *
 * <p>Configured in logback.xml. The patterns it remembers are bounded (Caffeine, least
 * recently used out). Thread-safe.
 */
public final class RepeatedWarningFilter extends TurboFilter {

  private static final int MAX_KEY = 120;

  private int allowed = 5;
  private long windowNanos = TimeUnit.SECONDS.toNanos(10);
  private @Nullable Cache<String, Window> windows; // built by start()
  private final ThreadLocal<Boolean> summarising = new ThreadLocal<>();
  private LongSupplier nanoClock = io.roster.server.time.SystemScheduler::systemNanoTime;

  /** For tests: the clock windows are measured on. */
  void clock(LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
  }

  /** Warnings of one pattern logged per window (default 5). */
  public void setAllowed(int allowed) {
    this.allowed = allowed;
  }

  /** The window, in seconds (default 10). */
  public void setWindowSeconds(int seconds) {
    this.windowNanos = TimeUnit.SECONDS.toNanos(seconds);
  }

  @Override
  public void start() {
    windows = Caffeine.newBuilder().maximumSize(1_000)
        .expireAfterAccess(Duration.ofNanos(windowNanos * 6)).build();
    super.start();
  }

  @Override
  public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
    if (level == null || !level.isGreaterOrEqual(Level.WARN) || !isStarted() || windows == null
        || summarising.get() != null
        || !level.isGreaterOrEqual(logger.getEffectiveLevel())) {
      return FilterReply.NEUTRAL;
    }
    String pattern = format == null ? String.valueOf(t) : format;
    String key = logger.getName() + '|' + (pattern.length() > MAX_KEY ? pattern.substring(0, MAX_KEY) : pattern);
    long now = nanoClock.getAsLong();
    Window w = windows.get(key, k -> new Window(now));
    int suppressedBefore;
    synchronized (w) {
      if (now - w.startNanos >= windowNanos) {
        suppressedBefore = w.suppressed;
        w.startNanos = now;
        w.logged = 0;
        w.suppressed = 0;
      } else {
        suppressedBefore = 0;
      }
      if (w.logged >= allowed) {
        w.suppressed++;
        return FilterReply.DENY;
      }
      w.logged++;
    }
    if (suppressedBefore > 0) {
      summarising.set(Boolean.TRUE);
      try {
        logger.warn("{} more like the next one were suppressed in the last {} s", suppressedBefore,
            TimeUnit.NANOSECONDS.toSeconds(windowNanos));
      } finally {
        summarising.remove();
      }
    }
    return FilterReply.NEUTRAL;
  }

  /** One pattern's current window. */
  private static final class Window {
    long startNanos;
    int logged;
    int suppressed;

    Window(long startNanos) {
      this.startNanos = startNanos;
    }
  }
}
