package io.roster.server.auth;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import io.roster.server.model.RegistryException;
import io.roster.server.time.SystemScheduler;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit trail: one INFO line on the logger {@value #LOGGER} per operator action, login and
 * refusal, naming who (the identity, or {@code anonymous} with auth off), from where (the
 * caller's host), what, on what, and how it ended:
 *
 * <pre>audit: who=ops from=10.0.0.5 action=UpdateInstance target=prod/DEFAULT_GROUP@@orders 10.0.0.1:80/DEFAULT change=enabled=false result=ok</pre>
 *
 * <ul>
 *   <li>operator actions ({@link #log}): holds, settings, drains, log levels, membership, and
 *       every change an admin makes to another identity's registration ({@link #track});
 *   <li>logins, successful and failed ({@link #login});
 *   <li>refusals ({@link #refused}): a request refused for its identity (no or a bad
 *       credential, a missing permission, another identity's instance). The first refusal of an
 *       identity from a host is written at once; the others in the next {@link #WINDOW} are
 *       counted and written as one line when the window ends (at most {@link #MAX_WINDOWS} pairs
 *       at a time), so that a flood of refusals costs a line a minute per identity and host.
 * </ul>
 *
 * <p>Requests of clients that are allowed never come here, so no load makes it a line per
 * request. The trail cannot be silenced: its logger's level is fixed at INFO and no log-level API
 * may change it ({@code LogLevels}); the server also writes it to a size-capped file of its own
 * ({@code --audit-log}). Thread-safe.
 */
public final class Audit {

  /** The audit trail's logger. */
  public static final String LOGGER = "roster.audit";

  /** How long refusals of one identity from one host are counted into one line. */
  public static final Duration WINDOW = Duration.ofMinutes(1);

  /** Identity and host pairs whose refusals are counted at a time; the oldest is written out beyond. */
  static final int MAX_WINDOWS = 10_000;

  private static final Logger log = LoggerFactory.getLogger(LOGGER);

  private static volatile Refusals refusals = new Refusals(SystemScheduler::systemNanoTime);

  private Audit() {}

  /**
   * Logs one operator action.
   *
   * @param action the operation, e.g. {@code UpdateInstance}
   * @param target what it acted on, e.g. {@code prod/DEFAULT_GROUP@@orders 10.0.0.1:8080/DEFAULT}
   * @param change what it asked for, e.g. {@code enabled=false}; empty when nothing more to say
   * @param result {@code ok}, or the refusal's message
   */
  public static void log(Principal who, String action, String target, String change, String result) {
    log.info("audit: who={} from={} action={} target={}{} result={}", name(who), from(who.from()), action, target,
        change.isEmpty() ? "" : " change=" + change, result);
  }

  /**
   * Logs a login: {@code result} is {@code ok} or why it was refused.
   *
   * @param user the user name given (shown only if it is a valid name)
   */
  public static void login(String user, String from, String result) {
    log.info("audit: who={} from={} action=Login result={}", AuthFile.validName(user) ? user : "(not a user name)",
        from(from), result);
  }

  /**
   * A request refused for its identity: written now if it is the first of {@code who} from its
   * host in a {@link #WINDOW}, else counted into that window's line.
   *
   * @param what what was asked, e.g. {@code write on namespace "prod"}
   * @param why the refusal's message
   */
  public static void refused(Principal who, String what, String why) {
    refused(name(who), who.from(), what, why);
  }

  /** Same, for a caller that proved no identity ({@code who}: the name it claimed, or empty). */
  public static void refused(String who, String from, String what, String why) {
    refusals.refused(who.isEmpty() ? "(none)" : AuthFile.validName(who) || who.equals("anonymous") ? who
        : "(not a user name)", from(from), what, why);
  }

  /**
   * Follows a registration or removal by {@code who} of what {@code heldBy} (another identity, or
   * empty) registered: when it replaces or removes another identity's registration (an admin's
   * right), a line once it is done; when it is refused for the owner, a refusal.
   *
   * @param action e.g. {@code Register}, {@code Deregister}
   * @param target the service and instance
   * @return {@code done}
   */
  public static <T> CompletableFuture<T> track(Principal who, String heldBy, String action, String target,
      CompletableFuture<T> done) {
    if (!who.named()) {
      return done;
    }
    boolean another = !heldBy.isEmpty() && !heldBy.equals(who.name());
    done.whenComplete((r, failed) -> {
      Throwable cause = failed instanceof CompletionException c && c.getCause() != null ? c.getCause() : failed;
      if (cause == null && another) {
        log(who, action + "(admin)", target, "of \"" + heldBy + "\"", "ok");
      } else if (cause instanceof RegistryException e && e.kind() == RegistryException.Kind.PERMISSION_DENIED) {
        refused(who, action + " " + target, String.valueOf(e.getMessage()));
      }
    });
    return done;
  }

  /** Writes the refusal windows that have ended (the server calls it now and then; tests too). */
  public static void flush() {
    refusals.windows.cleanUp();
  }

  /** Writes every refusal window now, ended or not (the server stops). */
  public static void flushAll() {
    refusals.windows.invalidateAll();
  }

  /** For tests: counts refusals in windows on {@code ticker}, starting afresh. */
  static void ticker(Ticker ticker) {
    refusals = new Refusals(ticker);
  }

  private static String name(Principal who) {
    return who.named() ? who.name() : "anonymous";
  }

  private static String from(String host) {
    return host.isEmpty() ? "-" : host;
  }

  /** Refusals per identity and host, one window each. */
  private static final class Refusals {
    final Cache<String, Window> windows;

    Refusals(Ticker ticker) {
      windows = Caffeine.newBuilder().maximumSize(MAX_WINDOWS).expireAfterWrite(WINDOW).ticker(ticker)
          .executor(Runnable::run)
          .<String, Window>removalListener((key, w, cause) -> {
            if (w != null && w.count.get() > 1) {
              log.info("audit: who={} from={} action=Refused count={} within={}s last={} result={}", w.who, w.from,
                  w.count.get(), WINDOW.toSeconds(), w.lastWhat, w.lastWhy);
            }
          }).build();
    }

    void refused(String who, String from, String what, String why) {
      Window w = windows.get(who + "\u0000" + from, k -> new Window(who, from));
      w.lastWhat = what;
      w.lastWhy = why;
      if (w.count.incrementAndGet() == 1) {
        log.info("audit: who={} from={} action=Refused what={} result={} (more from this identity and host in the "
            + "next {} s are counted into one line)", who, from, what, why, WINDOW.toSeconds());
      }
    }
  }

  private static final class Window {
    final String who;
    final String from;
    final AtomicInteger count = new AtomicInteger();
    volatile @Nullable String lastWhat;
    volatile @Nullable String lastWhy;

    Window(String who, String from) {
      this.who = who;
      this.from = from;
    }
  }
}
