package io.roster.server.auth;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Password guesses, slowed per (host, username) and per host in windows of one minute, and bad
 * tokens, counted (decision 79). Only a login's password check costs the server anything worth
 * sparing, so only logins are ever refused unchecked, and never one that could be the user's own:
 *
 * <ul>
 *   <li>after {@link #PAIR_LIMIT} failed logins of one username from one host in a window, that
 *       pair's logins are refused unchecked until the window ends;
 *   <li>after {@link #HOST_LIMIT} failed logins from one host over all usernames, that host's
 *       logins are refused unchecked, except those of usernames that logged in from it before
 *       (for the token lifetime), which are checked as ever. A sprayer guessing
 *       many usernames from a host thus cannot lock out the users of that host; one guessing the
 *       password of a user from that user's own host can (docs/security.md says why);
 *   <li>checks under way count as failures until they end, so a burst of guesses sent at once
 *       gets no more checks than one sent in turn.
 * </ul>
 *
 * <p>Bad tokens (unknown static tokens, forged access tokens) are only counted: a token's check is
 * a hash lookup or an HMAC, as cheap as a refusal, so refusing tokens unchecked would spare nothing
 * and only lock out the innocent. Logged at WARN once per host per window: the first bad credential,
 * then the counts when the window closes. Bounded (Caffeine): at most {@link #MAX_HOSTS} hosts and
 * {@link #MAX_PAIRS} pairs in their windows, {@link #MAX_PAIRS} proven pairs. Thread-safe: the
 * decisions about logins are taken under this object's lock (a few map lookups); counting a bad
 * token takes no lock.
 */
final class Guesses {

  /** Failed logins of one username from one host per window before that pair is refused unchecked. */
  static final int PAIR_LIMIT = 5;

  /** Failed logins from one host per window before its unproven usernames are refused unchecked. */
  static final int HOST_LIMIT = 30;

  static final Duration WINDOW = Duration.ofMinutes(1);

  static final int MAX_HOSTS = 10_000;
  static final int MAX_PAIRS = 100_000;

  private static final Logger log = LoggerFactory.getLogger(Guesses.class);

  private final Ticker ticker;
  private final Cache<String, Window> hosts;
  private final Cache<String, Window> pairs;
  private final Cache<String, Boolean> proven;
  private final LongAdder failures = new LongAdder();
  private final LongAdder throttled = new LongAdder();

  /** One host's or one pair's window: from its first event, {@link #WINDOW} long. */
  private static final class Window {
    final long startNanos;
    /** Failed logins (a pair's, or a host's over every username). */
    final AtomicInteger failures = new AtomicInteger();
    /** Checks admitted and not ended yet (a host's: of usernames not proven from it). */
    int pending; // under the lock of Guesses
    /** Host windows only: bad tokens, logins refused unchecked, and whether the WARN was written. */
    final AtomicInteger badTokens = new AtomicInteger();
    final AtomicInteger throttled = new AtomicInteger();
    final AtomicInteger revoked = new AtomicInteger();
    final AtomicBoolean warned = new AtomicBoolean();
    final AtomicBoolean warnedRevoked = new AtomicBoolean();
    /** Host windows only: why the host's last login failed and when, or null after a success. */
    volatile @Nullable String lastFailure;
    /** Whose login failed last: only that user's success clears {@link #lastFailure}. */
    volatile @Nullable String lastFailureUser;
    volatile long lastFailureNanos;

    Window(long startNanos) {
      this.startNanos = startNanos;
    }
  }

  /** What {@link #admit} decides: a {@link Ticket} to check the password, or a {@link Refusal}. */
  sealed interface Admission permits Ticket, Refusal {}

  /** A login admitted to its check: hand it back to {@link #ended} or {@link #abandoned}. */
  static final class Ticket implements Admission {
    final String host;
    final String user;
    final String pair;
    final boolean proven;
    private final Window hostWindow;
    private final Window pairWindow;

    private Ticket(String host, String user, String pair, boolean proven, Window hostWindow, Window pairWindow) {
      this.host = host;
      this.user = user;
      this.pair = pair;
      this.proven = proven;
      this.hostWindow = hostWindow;
      this.pairWindow = pairWindow;
    }
  }

  /** A login refused unchecked: what to say and when to try again. */
  record Refusal(String message, Duration retryAfter) implements Admission {}

  /**
   * @param ticker the clock of the windows (the server's scheduler)
   * @param provenFor how long a username stays proven from a host after a login (the token lifetime)
   */
  Guesses(Ticker ticker, Duration provenFor) {
    this.ticker = ticker;
    this.hosts = Caffeine.newBuilder().maximumSize(MAX_HOSTS).expireAfterWrite(WINDOW).ticker(ticker)
        .executor(Runnable::run)
        .<String, Window>removalListener((host, w, cause) -> {
          if (host != null && w != null && cause == RemovalCause.EXPIRED) {
            closed(host, w);
          }
        }).build();
    this.pairs = Caffeine.newBuilder().maximumSize(MAX_PAIRS).expireAfterWrite(WINDOW).ticker(ticker)
        .executor(Runnable::run).build();
    this.proven = Caffeine.newBuilder().maximumSize(MAX_PAIRS).expireAfterWrite(provenFor).ticker(ticker)
        .executor(Runnable::run).build();
  }

  /** The longest username kept in a pair's key: longer ones name no user (AuthFile's names are shorter). */
  private static final int MAX_KEPT_NAME = 65;

  /**
   * Whether a login of {@code user} from {@code host} may have its password checked now. Cheap
   * (map lookups, no hashing): safe on any thread.
   *
   * @return a ticket to hand to {@link #ended} once checked, or the refusal (429: no check made)
   */
  synchronized Admission admit(String host, String user) {
    String name = user.length() > MAX_KEPT_NAME ? user.substring(0, MAX_KEPT_NAME) : user;
    String pair = host + " " + name;
    boolean isProven = proven.getIfPresent(pair) != null;
    long now = ticker.read();
    Window h = hosts.get(host, k -> new Window(now));
    Window p = pairs.get(pair, k -> new Window(now));
    if (p.failures.get() + p.pending >= PAIR_LIMIT) {
      return throttled(h, new Refusal("password: " + PAIR_LIMIT + " failed logins of \"" + shown(name) + "\" from "
          + host + " within " + WINDOW.toSeconds() + " s; its logins are not checked until " + retryIn(p, now), left(p, now)));
    }
    if (!isProven && h.failures.get() + h.pending >= HOST_LIMIT) {
      return throttled(h, new Refusal("password: " + HOST_LIMIT + " failed logins from " + host + " within "
          + WINDOW.toSeconds() + " s; logins of users who have not logged in from this address lately are not "
          + "checked until " + retryIn(h, now), left(h, now)));
    }
    p.pending++;
    if (!isProven) {
      h.pending++;
    }
    return new Ticket(host, name, pair, isProven, h, p);
  }

  /**
   * A login admitted by {@link #admit} was checked: a success proves its username from its host
   * (and clears the pair's failures); a failure counts against the pair and the host.
   *
   * @param what for a failure, what was wrong, for the log
   */
  void ended(Ticket t, boolean ok, String what) {
    synchronized (this) {
      t.pairWindow.pending--;
      if (!t.proven) {
        t.hostWindow.pending--;
      }
      long now = ticker.read();
      // The windows of now: the ticket's may have closed while the check waited.
      Window h = hosts.get(t.host, k -> new Window(now));
      if (ok) {
        pairs.invalidate(t.pair);
        proven.put(t.pair, Boolean.TRUE);
        if (t.user.equals(h.lastFailureUser)) {
          h.lastFailure = null;
        }
        return;
      }
      pairs.get(t.pair, k -> new Window(now)).failures.incrementAndGet();
      h.failures.incrementAndGet();
      h.lastFailureNanos = now;
      h.lastFailure = what;
      h.lastFailureUser = t.user;
      failed(t.host, h, what);
    }
  }

  /** A check admitted by {@link #admit} that was never made (the server is stopping, its queue was full). */
  synchronized void abandoned(Ticket t) {
    t.pairWindow.pending--;
    if (!t.proven) {
      t.hostWindow.pending--;
    }
  }

  /**
   * Counts a login refused at once for repeating a password that failed from its host lately: a
   * bad credential, but no new guess, so it counts against neither the pair nor the host.
   */
  void repeated(String host, String user, String what) {
    long now = ticker.read();
    Window h = hosts.get(host, k -> new Window(now));
    h.lastFailureNanos = now;
    h.lastFailure = what;
    h.lastFailureUser = user;
    failed(host, h, what);
  }

  /** Counts a bad token from {@code host}; {@code what} says which, for the log. Never refuses anyone. */
  void badToken(String host, String what) {
    long now = ticker.read();
    Window h = hosts.get(host, k -> new Window(now));
    h.badTokens.incrementAndGet();
    failed(host, h, what);
  }

  /**
   * Counts a revoked credential from {@code host} (one that left the auth file): no guess, and never
   * refusing anyone, but logged once per host per window, so that the application still using it
   * is found.
   */
  void revoked(String host, String what) {
    long now = ticker.read();
    Window h = hosts.get(host, k -> new Window(now));
    h.revoked.incrementAndGet();
    if (h.warnedRevoked.compareAndSet(false, true)) {
      log.warn("A revoked credential from {}: {} (further ones from this address in the next {} s are counted, "
          + "not logged)", host, what, WINDOW.toSeconds());
    }
  }

  /** Counts a login refused without its check for want of room in the queue of checks (429). */
  void queueFull(String host) {
    long now = ticker.read();
    Window h = hosts.get(host, k -> new Window(now));
    throttled.increment();
    h.throttled.incrementAndGet();
  }

  private void failed(String host, Window h, String what) {
    failures.increment();
    if (h.warned.compareAndSet(false, true)) {
      log.warn("Bad credentials from {}: {} (further ones from this address in the next {} s are counted, "
          + "not logged)", host, what, WINDOW.toSeconds());
    }
  }

  private Refusal throttled(Window h, Refusal r) {
    throttled.increment();
    h.throttled.incrementAndGet();
    return r;
  }

  private static void closed(String host, Window w) {
    int bad = w.failures.get() + w.badTokens.get();
    if (bad > 1 || w.throttled.get() > 0 || w.revoked.get() > 1) {
      log.warn("{} bad credentials from {} in the last {} s ({} failed logins, {} bad tokens); {} logins refused "
          + "unchecked; {} revoked credentials", bad, host, WINDOW.toSeconds(), w.failures.get(), w.badTokens.get(),
          w.throttled.get(), w.revoked.get());
    }
  }

  /**
   * When the last login from {@code host} within the window failed: why and how long ago, to tell
   * a client that sends no token what probably happened (a client given a username and password
   * sends none when its login fails); null when there was none, or that user logged in since.
   */
  @Nullable String lastFailedLogin(String host) {
    Window h = hosts.getIfPresent(host);
    String why = h == null ? null : h.lastFailure;
    if (h == null || why == null) {
      return null;
    }
    long ago = TimeUnit.NANOSECONDS.toSeconds(ticker.read() - h.lastFailureNanos);
    return "the last login from " + host + ", " + ago + " s ago, failed (" + why + ")";
  }

  /** Bad credentials counted since start (failed logins and bad tokens), from every host. */
  long failures() {
    return failures.sum();
  }

  /** Logins refused without their check since start (429), from every host. */
  long throttled() {
    return throttled.sum();
  }

  /** Whether {@code user} logged in from {@code host} lately (within the token lifetime). */
  boolean proven(String host, String user) {
    return proven.getIfPresent(host + " " + user) != null;
  }

  /** Closes the windows that have ended (their counts are logged). */
  void cleanUp() {
    hosts.cleanUp();
    pairs.cleanUp();
    proven.cleanUp();
  }

  private static Duration left(Window w, long now) {
    long nanos = WINDOW.toNanos() - (now - w.startNanos);
    return Duration.ofSeconds(Math.max(1, TimeUnit.NANOSECONDS.toSeconds(nanos + TimeUnit.SECONDS.toNanos(1) - 1)));
  }

  private static String retryIn(Window w, long now) {
    return "the window ends (retry in " + left(w, now).toSeconds() + " s)";
  }

  private static String shown(String name) {
    return AuthFile.validName(name) ? name : "(not a user name)";
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
