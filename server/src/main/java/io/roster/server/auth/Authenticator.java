package io.roster.server.auth;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.roster.server.model.RegistryException;
import io.roster.server.time.Scheduler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one check of who a caller is, for every port and protocol: a credential (a static token
 * from the auth file, or an access token a login issued) becomes a {@link Principal}, or is
 * refused with UNAUTHENTICATED naming the field it came in. With auth off ({@link #off()}) every
 * caller is {@link Principal#ANONYMOUS}.
 *
 * <p>The auth file is read again when its content changes (checked every {@link #RELOAD_EVERY});
 * a file that no longer parses is logged and the last good one kept. Listeners added with {@link
 * #onCheck} run after every check, changed or not, on the scheduler's thread: the session layer
 * revalidates its sessions' principals there ({@link #revalidate}), which ends those whose
 * identity was removed, whose access token expired or whose password changed since its login.
 *
 * <p>Guessing is slowed where it costs the server, at the password check, and nowhere else
 * (decision 79): a token's check is as cheap as a refusal, so a valid token always passes
 * whatever its host sent before; bad tokens are only counted ({@link Guesses}). A credential
 * that left the auth file (a static token removed or replaced, a removed user's or an old
 * password's access token) is refused as revoked, saying when, and is not counted as a guess.
 * Logins ({@link #login}) are checked one at a time on a thread of their own ({@link
 * PasswordChecks}) and answered asynchronously; too many failed logins of a username from a host,
 * or from a host over all usernames, have that pair's (or that host's unproven usernames') logins
 * refused unchecked for the rest of a minute. Thread-safe.
 */
public final class Authenticator implements AutoCloseable {

  /** How often the auth file is checked for changes. */
  public static final Duration RELOAD_EVERY = Duration.ofSeconds(2);

  /** What Nacos's {@code tokenTtl} defaults to: 5 hours. */
  public static final Duration DEFAULT_TOKEN_TTL = Duration.ofHours(5);

  /** How long a credential that left the auth file is remembered, to be refused as revoked. */
  static final Duration REMEMBER_REVOKED = Duration.ofHours(24);

  /** Revoked credentials remembered at most (the oldest go first). */
  static final int MAX_REVOKED = 10_000;

  /**
   * How long a login refused unchecked waits for its 429: a guesser answered at once would only
   * guess again at once, and its requests, cheap as each is, would take the CPU the password checks
   * of others need. The wait holds no thread (the answer is completed by the scheduler).
   */
  public static final Duration THROTTLED_ANSWER_DELAY = Duration.ofSeconds(1);

  private static final Logger log = LoggerFactory.getLogger(Authenticator.class);

  /** The field Nacos clients send their token in, the one that may come from a login. */
  private static final String ACCESS_TOKEN = "accessToken";

  private final @Nullable Path path;
  private final Duration tokenTtl;
  private final Scheduler scheduler; // unused when off
  private final Guesses guesses;
  private final @Nullable PasswordChecks checks;
  private final Duration throttledDelay;
  /**
   * Credentials that left the auth file, by key: {@code t:SHA256} a static token, {@code n:NAME} a
   * user or token name, {@code p:NAME:STAMP} a user's password (replaced, or the user removed).
   */
  private final Cache<String, Revocation> revoked;
  private final LongAdder revokedSeen = new LongAdder();
  /**
   * Logins known to be wrong, by a keyed digest of host, username and password: an application left
   * running with a wrong password asks again every few seconds, and is no guesser. Emptied at every
   * change of the file (a password known wrong may have become right).
   */
  private final Cache<String, Boolean> knownWrong;
  private final SecretKeySpec attemptKey = new SecretKeySpec(Base64.getUrlDecoder().decode(Passwords.randomSecret(32)),
      "HmacSHA256");
  private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
  private volatile @Nullable Loaded loaded;
  private volatile Scheduler.@Nullable Cancellable poll;
  private @Nullable String lastProblem; // on the scheduler's thread only
  private final Reloads reloads = new Reloads();

  private record Loaded(String content, AuthFile file, @Nullable AccessTokens tokens) {}

  /** A credential that left the auth file: what happened to it, and when this server saw it. */
  private record Revocation(String what, long atMillis) {
    String said() {
      return what + " at " + Instant.ofEpochMilli(atMillis);
    }
  }

  private Authenticator(@Nullable Path path, Duration tokenTtl, Scheduler scheduler, Duration throttledDelay) {
    this.path = path;
    this.throttledDelay = throttledDelay;
    this.tokenTtl = tokenTtl;
    this.scheduler = scheduler;
    this.guesses = new Guesses(scheduler::nanoTime, tokenTtl);
    this.checks = path == null ? null : new PasswordChecks(scheduler::nanoTime);
    this.revoked = Caffeine.newBuilder().maximumSize(MAX_REVOKED).expireAfterWrite(REMEMBER_REVOKED)
        .ticker(scheduler::nanoTime).executor(Runnable::run).build();
    this.knownWrong = Caffeine.newBuilder().maximumSize(Guesses.MAX_HOSTS).expireAfterWrite(Guesses.WINDOW)
        .ticker(scheduler::nanoTime).executor(Runnable::run).build();
  }

  /** Auth off: every caller is {@link Principal#ANONYMOUS}. */
  public static Authenticator off() {
    return new Authenticator(null, DEFAULT_TOKEN_TTL, OFF, Duration.ZERO);
  }

  /**
   * Auth on, with the users and tokens of the file at {@code path}, watched for changes.
   *
   * @throws IllegalArgumentException when the file cannot be read or is not a valid auth file
   */
  public static Authenticator open(Path path, Duration tokenTtl, Scheduler scheduler) {
    return open(path, tokenTtl, scheduler, THROTTLED_ANSWER_DELAY);
  }

  /** The same, with logins refused unchecked answered after {@code throttledDelay} (tests: zero). */
  static Authenticator open(Path path, Duration tokenTtl, Scheduler scheduler, Duration throttledDelay) {
    Loaded first = load(readBytes(path), path); // before any thread is started for it
    Authenticator a = new Authenticator(path, tokenTtl, scheduler, throttledDelay);
    a.loaded = first;
    a.reloads.loaded(scheduler.currentTimeMillis());
    log.info("Auth on: {} ({}), checked for changes every {} s", path,
        java.util.Objects.requireNonNull(a.loaded).file().summary(), RELOAD_EVERY.toSeconds());
    a.schedulePoll();
    return a;
  }

  /** The auth file, or null with auth off. */
  public @Nullable Path file() {
    return path;
  }

  /** Whether callers must prove who they are. */
  public boolean enabled() {
    return path != null;
  }

  /** How long the access tokens of {@link #login} are valid. */
  public Duration tokenTtl() {
    return tokenTtl;
  }

  /** Runs {@code listener} after every check of the file, changed or not (on the scheduler's thread). */
  public void onCheck(Runnable listener) {
    listeners.add(listener);
  }

  /**
   * Who {@code credential} proves the caller is.
   *
   * @param field where the credential came, as the protocol names it ({@code hello.token},
   *     {@code authorization}, {@code accessToken}), for the refusal
   * @param remoteAddress the caller, for counting bad credentials per host
   * @throws RegistryException UNAUTHENTICATED when the credential is missing, unknown (counted
   *     against the caller's host, which never refuses anyone), expired, or revoked: a static token
   *     that left the auth file, an access token of a removed user or issued before its user's
   *     password changed (not counted)
   */
  public Principal authenticate(@Nullable String credential, String remoteAddress, String field) {
    try {
      return identify(credential, remoteAddress, field).from(Guesses.host(remoteAddress));
    } catch (RegistryException e) {
      Audit.refused("", Guesses.host(remoteAddress), field, String.valueOf(e.getMessage()));
      throw e;
    }
  }

  private Principal identify(@Nullable String credential, String remoteAddress, String field) {
    Loaded l = loaded;
    if (l == null) {
      return Principal.ANONYMOUS;
    }
    String host = Guesses.host(remoteAddress);
    if (credential == null || credential.isEmpty()) {
      // Nacos clients given a username and password send no token when their login failed: say so.
      String failedLogin = field.equals(ACCESS_TOKEN) ? guesses.lastFailedLogin(host) : null;
      throw RegistryException.unauthenticated(field, field + ": missing (expected: a token; this server "
          + "requires one, see docs/security.md)" + (failedLogin == null ? ""
              : "; " + failedLogin + ", and a client given a username and password sends no token when its login fails"));
    }
    if (credential.startsWith(AccessTokens.PREFIX)) {
      AccessTokens.Claims claims = l.tokens() == null ? null : l.tokens().verify(credential);
      if (claims == null) {
        throw bad(host, field, "an access token this server did not issue (or its tokenSecret changed)");
      }
      long expiresAt = claims.expiresAtSeconds() * 1000;
      // Signed by this server: not a guess, so not counted against the host (its client logs in again).
      if (expiresAt <= scheduler.currentTimeMillis()) {
        throw RegistryException.unauthenticated(field, field + ": refused: the access token of \"" + claims.user()
            + "\" expired at " + Instant.ofEpochMilli(expiresAt) + "; log in again");
      }
      AuthFile.User user = l.file().user(claims.user());
      if (user == null) {
        throw revoked(host, field, userRemoved(claims.user()));
      }
      if (claims.stamp() != null && !claims.stamp().equals(user.stamp())) {
        throw revoked(host, field, passwordChanged(user.name(), claims.stamp()) + "; log in again");
      }
      return new Principal(user.name(), user.grants(), expiresAt, claims.stamp(), host);
    }
    String sha256 = Passwords.sha256(credential);
    AuthFile.Token token = l.file().tokenWithHash(sha256);
    if (token == null) {
      Revocation r = revoked.getIfPresent("t:" + sha256);
      if (r != null) {
        throw revoked(host, field, r.said());
      }
      throw bad(host, field, "a token the auth file does not list");
    }
    return new Principal(token.name(), token.grants(), Long.MAX_VALUE);
  }

  /**
   * Who a caller is from its credential or, when it sent none, from its client certificate
   * (decision 80): an explicit credential always wins and is checked as {@link
   * #authenticate(String, String, String)} does, never falling back to the certificate; without
   * one, a certificate whose SANs map to one certificate entry of the auth file is that identity.
   * A certificate that maps to none counts as no credential at all (not as a bad one: the TLS layer
   * verified it, so it is no guess).
   *
   * @param peerCertificates the chain the TLS layer verified for this caller, leaf first ({@link
   *     ClientCertificates#of}); empty on plaintext or without a client certificate. Never anything
   *     a caller sent as data.
   * @throws RegistryException UNAUTHENTICATED as {@link #authenticate(String, String, String)}
   *     does; for a certificate, when its SANs map to no identity (naming the field that was missing and listing
   *     the SANs) or to more than one
   */
  public Principal authenticate(@Nullable String credential, List<java.security.cert.X509Certificate> peerCertificates,
      String remoteAddress, String field) {
    Loaded l = loaded;
    if (l == null) {
      return Principal.ANONYMOUS.from(Guesses.host(remoteAddress));
    }
    if ((credential != null && !credential.isEmpty()) || peerCertificates.isEmpty()) {
      return authenticate(credential, remoteAddress, field);
    }
    try {
      return byCertificate(l, peerCertificates, remoteAddress, field);
    } catch (RegistryException e) {
      Audit.refused("", Guesses.host(remoteAddress), field, String.valueOf(e.getMessage()));
      throw e;
    }
  }

  private Principal byCertificate(Loaded l, List<java.security.cert.X509Certificate> peerCertificates,
      String remoteAddress, String field) {
    ClientCertificates.Sans sans = ClientCertificates.sans(peerCertificates.get(0));
    List<AuthFile.Certificate> found = l.file().certificatesFor(sans);
    if (found.size() == 1) {
      AuthFile.Certificate c = found.get(0);
      return new Principal(c.name(), c.grants(), Long.MAX_VALUE, null, Guesses.host(remoteAddress));
    }
    if (found.isEmpty()) {
      throw RegistryException.unauthenticated(field, field + ": missing (expected: a token, or a client certificate "
          + "the auth file maps to an identity; " + (sans.isEmpty() ? "this certificate has no URI or DNS SAN"
          : "this certificate's SANs map to no identity: " + sans) + "; see docs/security.md)");
    }
    throw RegistryException.unauthenticated(field, field + ": refused: the client certificate's SANs (" + sans
        + ") map to more than one identity (" + String.join(", ", found.stream().limit(ClientCertificates.Sans.SHOWN)
        .map(c -> "\"" + c.name() + "\" by " + c.san()).toList()) + (found.size() > ClientCertificates.Sans.SHOWN
        ? " and " + (found.size() - ClientCertificates.Sans.SHOWN) + " more" : "")
        + "); send a token, or give the certificate the SAN of one identity");
  }

  /**
   * The token of an {@code authorization} value {@code Bearer TOKEN} (any case); the value itself
   * otherwise, and null for null. Every transport that takes the header reads it here.
   */
  public static @Nullable String bearer(@Nullable String authorization) {
    String prefix = "bearer ";
    if (authorization != null && authorization.length() > prefix.length()
        && authorization.regionMatches(true, 0, prefix, 0, prefix.length())) {
      return authorization.substring(prefix.length()).trim();
    }
    return authorization;
  }

  /** Bad credentials since start, on every port (0 with auth off): unknown tokens and failed logins. */
  public long failures() {
    return guesses.failures();
  }

  /** What the checks of the auth file found since start. */
  public Reloads reloads() {
    return reloads;
  }

  /** Logins refused without their password check since start (429): too many failures, or a full queue. */
  public long loginsThrottled() {
    return guesses.throttled();
  }

  /** Credentials refused as revoked since start: static tokens that left the file, access tokens of an old password or a removed user. */
  public long revokedRefused() {
    return revokedSeen.sum();
  }

  /** What a login comes to: a {@link Login}, or why not. */
  public sealed interface LoginResult permits Login, Refused, Throttled, Unavailable {}

  /** An access token and how long it is valid, as a login answers. */
  public record Login(String accessToken, Duration ttl, Principal principal) implements LoginResult {}

  /** The password was checked and is wrong, or the user is unknown (one answer for both), or there are no users. */
  public record Refused(String message) implements LoginResult {}

  /**
   * Not checked: this username from this host, or this host, failed too often within the window,
   * or too many checks are waiting; try again after {@code retryAfter}.
   */
  public record Throttled(String message, Duration retryAfter) implements LoginResult {}

  /** Not checked: the server is stopping. */
  public record Unavailable(String message) implements LoginResult {}

  /**
   * Checks a user's password and issues an access token valid for {@link #tokenTtl}, on the thread
   * of the password checks, one at a time: never blocks the caller, whose future completes on that
   * thread, at once for a repeat of a password that just failed, and on the scheduler's thread
   * {@link #THROTTLED_ANSWER_DELAY} later when the login is refused unchecked. Never completes
   * exceptionally.
   */
  public CompletableFuture<LoginResult> login(String username, String password, String remoteAddress) {
    String host = Guesses.host(remoteAddress);
    return checkLogin(username, password, host).thenApply(result -> {
      Audit.login(username, host, result instanceof Login ? "ok"
          : result instanceof Refused r ? r.message()
          : result instanceof Throttled t ? "throttled: " + t.message()
          : "unavailable: " + ((Unavailable) result).message());
      return result;
    });
  }

  private CompletableFuture<LoginResult> checkLogin(String username, String password, String host) {
    Loaded l = loaded;
    PasswordChecks c = checks;
    if (l == null || l.tokens() == null || c == null) {
      return CompletableFuture.completedFuture(
          new Refused("login: this server has no users (auth is off, or the auth file lists none)"));
    }
    String attempt = attempt(host, username, password);
    if (knownWrong.getIfPresent(attempt) != null) {
      // The same wrong password again: answered at once and not counted as another guess.
      String why = wrongFor(username);
      guesses.repeated(host, username, "password: " + why);
      return CompletableFuture.completedFuture(new Refused("password: refused: " + why
          + " (the same password as a failed login from this address within the last minute; not checked again)"));
    }
    Guesses.Admission admission = guesses.admit(host, username);
    if (admission instanceof Guesses.Refusal r) {
      return later(new Throttled(r.message(), r.retryAfter()));
    }
    Guesses.Ticket ticket = (Guesses.Ticket) admission;
    CompletableFuture<LoginResult> result = new CompletableFuture<>();
    boolean queued = c.offer(ticket.proven, new PasswordChecks.Check() {
      @Override
      public void run() {
        result.complete(checkPassword(ticket, username, password, attempt));
      }

      @Override
      public void abandon() {
        guesses.abandoned(ticket);
        result.complete(new Unavailable("password: not checked, the server is stopping; log in again"));
      }
    });
    if (!queued) {
      guesses.abandoned(ticket);
      guesses.queueFull(host);
      Duration retry = c.retryAfter();
      return later(new Throttled("password: " + PasswordChecks.QUEUE
          + " logins are waiting for their check already; not checked (retry in " + retry.toSeconds() + " s)", retry));
    }
    return result;
  }

  /** {@code result}, after {@link #THROTTLED_ANSWER_DELAY}, completed by the scheduler. */
  private CompletableFuture<LoginResult> later(LoginResult result) {
    if (throttledDelay.isZero()) {
      return CompletableFuture.completedFuture(result);
    }
    CompletableFuture<LoginResult> f = new CompletableFuture<>();
    scheduler.schedule(() -> f.complete(result), throttledDelay);
    return f;
  }

  /** The password check itself, on the checks' thread, against the auth file as it is now. */
  private LoginResult checkPassword(Guesses.Ticket ticket, String username, String password, String attempt) {
    Loaded l = loaded;
    AccessTokens tokens = l == null ? null : l.tokens();
    AuthFile.User user = l == null ? null : l.file().user(username);
    // An unknown user costs a hash too, so timing does not tell which users exist.
    boolean ok = Passwords.matches(password, user != null ? user.passwordHash() : DUMMY_HASH) && user != null;
    if (!ok || user == null || tokens == null) {
      String why = wrongFor(username);
      if (java.util.Objects.equals(loaded, l)) { // not if the file changed meanwhile: the password may be right now
        knownWrong.put(attempt, Boolean.TRUE);
      }
      guesses.ended(ticket, false, "password: " + why);
      return new Refused("password: refused: " + why);
    }
    guesses.ended(ticket, true, "");
    long expiresAt = (scheduler.currentTimeMillis() + tokenTtl.toMillis()) / 1000;
    return new Login(tokens.issue(user.name(), expiresAt, user.stamp()), tokenTtl,
        new Principal(user.name(), user.grants(), expiresAt * 1000, user.stamp(), ticket.host));
  }

  /** The scheduler of an authenticator that is off: it is never asked for anything. */
  private static final Scheduler OFF = new Scheduler() {
    @Override
    public long nanoTime() {
      return io.roster.server.time.SystemScheduler.systemNanoTime();
    }

    @Override
    public long currentTimeMillis() {
      return io.roster.server.time.SystemScheduler.wallClockMicros() / 1000;
    }

    @Override
    public void execute(Runnable task) {
      throw new UnsupportedOperationException("auth is off");
    }

    @Override
    public Cancellable schedule(Runnable task, Duration delay) {
      throw new UnsupportedOperationException("auth is off");
    }
  };

  private static final String DUMMY_HASH = Passwords.hash(Passwords.randomSecret(16));

  private static String wrongFor(String username) {
    return "unknown user or wrong password" + (AuthFile.validName(username) ? " for \"" + username + "\"" : "");
  }

  /** A keyed digest of a login's host, username and password: the key of {@link #knownWrong}. */
  private String attempt(String host, String username, String password) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(attemptKey);
      mac.update((host + "\u0000" + username + "\u0000").getBytes(StandardCharsets.UTF_8));
      return Base64.getUrlEncoder().withoutPadding().encodeToString(mac.doFinal(password.getBytes(StandardCharsets.UTF_8)));
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
    }
  }

  /**
   * {@code p} as the auth file says now: its current grants, or null when its identity was removed
   * from the file, its credential has expired, or (for an access token's identity) its password
   * changed since the login. {@link Principal#ANONYMOUS} stays itself.
   */
  public @Nullable Principal revalidate(Principal p) {
    Loaded l = loaded;
    if (!p.named() || l == null) {
      return p;
    }
    if (p.expiresAtMillis() <= scheduler.currentTimeMillis()) {
      return null;
    }
    AuthFile.User user = l.file().user(p.name());
    if (user != null) {
      if (p.passwordStamp() != null && !p.passwordStamp().equals(user.stamp())) {
        return null;
      }
      return new Principal(user.name(), user.grants(), p.expiresAtMillis(), p.passwordStamp(), p.from());
    }
    if (p.passwordStamp() != null) {
      return null; // an access token's identity that is no user any more
    }
    AuthFile.Token token = l.file().token(p.name());
    if (token != null) {
      return new Principal(token.name(), token.grants(), p.expiresAtMillis(), null, p.from());
    }
    AuthFile.Certificate certificate = l.file().certificate(p.name());
    return certificate == null ? null
        : new Principal(certificate.name(), certificate.grants(), p.expiresAtMillis(), null, p.from());
  }

  /**
   * Why {@link #revalidate} ended {@code p}, for the status its session ends with: {@code "NAME" has
   * expired (at ...)} or {@code "NAME" was revoked: } what left the auth file, and when where this
   * server saw it.
   */
  public String ended(Principal p) {
    String name = "\"" + p.name() + "\"";
    if (p.expiresAtMillis() <= scheduler.currentTimeMillis()) {
      return name + " has expired (at " + Instant.ofEpochMilli(p.expiresAtMillis()) + ")";
    }
    Loaded l = loaded;
    AuthFile.User user = l == null ? null : l.file().user(p.name());
    if (p.passwordStamp() != null) {
      return name + " was revoked: " + (user == null ? userRemoved(p.name()) : passwordChanged(p.name(), p.passwordStamp()));
    }
    Revocation r = revoked.getIfPresent("n:" + p.name());
    return name + " was revoked: " + (r != null ? r.said() : name + " is no longer in the auth file");
  }

  private String userRemoved(String name) {
    Revocation r = revoked.getIfPresent("n:" + name);
    return r != null ? r.said() : "user \"" + name + "\" is no longer in the auth file";
  }

  private String passwordChanged(String name, String stamp) {
    Revocation r = revoked.getIfPresent("p:" + name + ":" + stamp);
    return "the password of \"" + name + "\" changed" + (r == null ? "" : " at " + Instant.ofEpochMilli(r.atMillis()))
        + " after this token was issued";
  }

  /** A bad credential: counted against its host (never refusing anyone for it), and refused. */
  private RegistryException bad(String host, String field, String why) {
    guesses.badToken(host, field + ": " + why);
    return RegistryException.unauthenticated(field, field + ": refused: " + why);
  }

  /** A credential that left the auth file: refused as revoked, and not counted as a guess. */
  private RegistryException revoked(String host, String field, String what) {
    revokedSeen.increment();
    guesses.revoked(host, field + ": " + what);
    return RegistryException.unauthenticated(field, field + ": refused: revoked: " + what);
  }

  // --- reload ---

  private void schedulePoll() {
    poll = scheduler.schedule(this::pollOnce, RELOAD_EVERY);
  }

  /** Reads the file again if its content changed; for tests, also called directly. */
  void pollOnce() {
    try {
      Loaded l = loaded;
      if (l == null || path == null) {
        return;
      }
      guesses.cleanUp();
      byte[] bytes;
      try {
        bytes = readBytes(path);
      } catch (IllegalArgumentException e) {
        reloads.refused();
        problem(e.getMessage());
        bytes = l.content().getBytes(StandardCharsets.UTF_8);
      }
      if (!new String(bytes, StandardCharsets.UTF_8).equals(l.content())) {
        try {
          Loaded now = load(bytes, path);
          revocations(l.file(), now.file(), scheduler.currentTimeMillis());
          loaded = now;
          knownWrong.invalidateAll();
          lastProblem = null;
          reloads.reloaded(scheduler.currentTimeMillis());
          log.info("Auth file {} reloaded ({})", path, java.util.Objects.requireNonNull(loaded).file().summary());
        } catch (IllegalArgumentException e) {
          reloads.refused();
          problem(e.getMessage());
        }
      }
      for (Runnable r : listeners) {
        try {
          r.run();
        } catch (RuntimeException e) {
          log.warn("A listener of the auth file's reload failed", e);
        }
      }
    } finally {
      if (poll != null) {
        schedulePoll();
      }
    }
  }

  /** Remembers what left the file between {@code before} and {@code after}, to refuse it as revoked. */
  private void revocations(AuthFile before, AuthFile after, long now) {
    for (AuthFile.Token t : before.tokens()) {
      if (after.tokenWithHash(t.sha256()) == null) {
        boolean replaced = after.token(t.name()) != null;
        revoked.put("t:" + t.sha256(), new Revocation("token \"" + t.name() + "\" was "
            + (replaced ? "replaced in" : "removed from") + " the auth file", now));
        if (!replaced) {
          revoked.put("n:" + t.name(), new Revocation("token \"" + t.name() + "\" was removed from the auth file", now));
        }
      }
    }
    for (AuthFile.User u : before.users()) {
      AuthFile.User v = after.user(u.name());
      if (v == null) {
        Revocation r = new Revocation("user \"" + u.name() + "\" was removed from the auth file", now);
        revoked.put("n:" + u.name(), r);
        revoked.put("p:" + u.name() + ":" + u.stamp(), r);
      } else if (!v.stamp().equals(u.stamp())) {
        revoked.put("p:" + u.name() + ":" + u.stamp(), new Revocation("the password of \"" + u.name() + "\" changed", now));
      }
    }
  }

  private void problem(@Nullable String message) {
    if (message != null && !message.equals(lastProblem)) {
      log.warn("{}; still using the last good auth file", message);
      lastProblem = message;
    }
  }

  private static byte[] readBytes(Path path) {
    try {
      return Files.readAllBytes(path);
    } catch (IOException e) {
      throw new IllegalArgumentException("auth file " + path + ": cannot read it (" + e + ")", e);
    }
  }

  private static Loaded load(byte[] bytes, Path path) {
    AuthFile file = AuthFile.parse(bytes, path.toString());
    byte[] secret = file.tokenSecret();
    return new Loaded(new String(bytes, StandardCharsets.UTF_8), file, secret == null ? null : new AccessTokens(secret));
  }

  @Override
  public void close() {
    Scheduler.Cancellable p = poll;
    poll = null;
    if (p != null) {
      p.cancel();
    }
    if (checks != null) {
      checks.close();
    }
  }
}
