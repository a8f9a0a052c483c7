package io.roster.server.auth;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Ticker;
import io.roster.server.model.RegistryException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bad credentials, counted per remote host in windows of one minute: after {@link #LIMIT} in a
 * window, that host's credentials are refused unchecked until the window ends, so guessing costs
 * the guesser time and the server no hashing. Logged at WARN once per host per window: the first
 * failure, then the count when the window closes. Bounded (Caffeine, the most hosts at a time
 * {@link #MAX_HOSTS}). Thread-safe.
 */
final class BadCredentials {

  /** Bad credentials from one host per window before it is refused unchecked. */
  static final int LIMIT = 10;

  static final Duration WINDOW = Duration.ofMinutes(1);

  private static final int MAX_HOSTS = 10_000;
  private static final Logger log = LoggerFactory.getLogger(BadCredentials.class);

  private final Cache<String, Window> windows;
  private final Ticker ticker;
  private final java.util.concurrent.atomic.LongAdder failures = new java.util.concurrent.atomic.LongAdder();
  private final java.util.concurrent.atomic.LongAdder connectionsRefused = new java.util.concurrent.atomic.LongAdder();

  private static final class Window {
    final long startNanos;
    final AtomicInteger count = new AtomicInteger();
    /** Connections closed at their door while the host was refused ({@link #refusesConnection}). */
    final AtomicInteger closed = new AtomicInteger();

    Window(long startNanos) {
      this.startNanos = startNanos;
    }
  }

  BadCredentials(Ticker ticker) {
    this.ticker = ticker;
    this.windows = Caffeine.newBuilder().maximumSize(MAX_HOSTS).expireAfterWrite(WINDOW).ticker(ticker)
        .executor(Runnable::run)
        .<String, Window>removalListener((host, w, cause) -> {
          if (host != null && w != null && cause == RemovalCause.EXPIRED && w.count.get() > 1) {
            log.warn("{} bad credentials from {} in the last {} s{}", w.count.get(), host, WINDOW.toSeconds(),
                w.closed.get() == 0 ? "" : "; " + w.closed.get() + " connections from it closed unread meanwhile");
          }
        }).build();
  }

  /**
   * Refuses, without looking at the credential, when {@code host} has had its fill of failures.
   *
   * @throws RegistryException UNAUTHENTICATED saying when to retry
   */
  void checkAllowed(String host, String field) {
    Window w = windows.getIfPresent(host);
    if (w != null && w.count.get() >= LIMIT) {
      long left = WINDOW.toNanos() - (ticker.read() - w.startNanos);
      throw RegistryException.unauthenticated(field, field + ": refused unchecked: " + LIMIT
          + " bad credentials from " + host + " within " + WINDOW.toSeconds() + " s (retry in "
          + Math.max(1, TimeUnit.NANOSECONDS.toSeconds(left)) + " s)");
    }
  }

  /**
   * Whether {@code host} is refused unchecked now, counting a connection closed for it when so: a
   * transport asks when a connection arrives, and closes it before any handshake (a refused host's
   * credentials would be refused anyway, and its connections are the cost of a flood).
   */
  boolean refusesConnection(String host) {
    Window w = windows.getIfPresent(host);
    if (w == null || w.count.get() < LIMIT) {
      return false;
    }
    w.closed.incrementAndGet();
    connectionsRefused.increment();
    return true;
  }

  /** Counts a bad credential from {@code host}; {@code what} says which, for the log. */
  void failed(String host, String what) {
    failures.increment();
    Window w = windows.get(host, h -> new Window(ticker.read()));
    if (w.count.incrementAndGet() == 1) {
      log.warn("Bad credentials from {}: {} (further ones from this address in the next {} s are counted, "
          + "not logged)", host, what, WINDOW.toSeconds());
    }
  }

  /** Bad credentials counted since start, from every host. */
  long failures() {
    return failures.sum();
  }

  /** Connections closed at accept since start, their host refused. */
  long connectionsRefused() {
    return connectionsRefused.sum();
  }

  /** Closes the windows that have ended (their counts are logged). */
  void cleanUp() {
    windows.cleanUp();
  }

  /** The host of a remote address as the transports give it ({@code /1.2.3.4:5678}, {@code [::1]:5678}). */
  static String host(String remoteAddress) {
    String a = remoteAddress.startsWith("/") ? remoteAddress.substring(1) : remoteAddress;
    int close = a.lastIndexOf(']');
    if (a.startsWith("[") && close > 0) {
      return a.substring(1, close);
    }
    int colon = a.lastIndexOf(':');
    return colon > 0 && a.indexOf(':') == colon ? a.substring(0, colon) : a;
  }
}
