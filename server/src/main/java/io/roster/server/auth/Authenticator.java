package io.roster.server.auth;

import io.roster.server.model.RegistryException;
import io.roster.server.time.Scheduler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
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
 * identity was removed or whose access token expired.
 *
 * <p>Bad credentials are counted per remote host ({@link BadCredentials}). Password checks
 * ({@link #login}) are slow by design and run one at a time; never call {@code login} on a
 * transport thread. Thread-safe.
 */
public final class Authenticator implements AutoCloseable {

  /** How often the auth file is checked for changes. */
  public static final Duration RELOAD_EVERY = Duration.ofSeconds(2);

  /** What Nacos's {@code tokenTtl} defaults to: 5 hours. */
  public static final Duration DEFAULT_TOKEN_TTL = Duration.ofHours(5);

  private static final Logger log = LoggerFactory.getLogger(Authenticator.class);

  private final @Nullable Path path;
  private final Duration tokenTtl;
  private final Scheduler scheduler; // unused when off
  private final BadCredentials bad;
  private final Semaphore hashing = new Semaphore(1, true);
  private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
  private volatile @Nullable Loaded loaded;
  private volatile Scheduler.@Nullable Cancellable poll;
  private @Nullable String lastProblem; // on the scheduler's thread only

  private record Loaded(String content, AuthFile file, @Nullable AccessTokens tokens) {}

  private Authenticator(@Nullable Path path, Duration tokenTtl, Scheduler scheduler) {
    this.path = path;
    this.tokenTtl = tokenTtl;
    this.scheduler = scheduler;
    this.bad = new BadCredentials(scheduler::nanoTime);
  }

  /** Auth off: every caller is {@link Principal#ANONYMOUS}. */
  public static Authenticator off() {
    return new Authenticator(null, DEFAULT_TOKEN_TTL, OFF);
  }

  /**
   * Auth on, with the users and tokens of the file at {@code path}, watched for changes.
   *
   * @throws IllegalArgumentException when the file cannot be read or is not a valid auth file
   */
  public static Authenticator open(Path path, Duration tokenTtl, Scheduler scheduler) {
    Authenticator a = new Authenticator(path, tokenTtl, scheduler);
    byte[] bytes = a.readBytes();
    a.loaded = load(bytes, path);
    log.info("Auth on: {} ({}), checked for changes every {} s", path,
        java.util.Objects.requireNonNull(a.loaded).file().summary(), RELOAD_EVERY.toSeconds());
    a.schedulePoll();
    return a;
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
   * @throws RegistryException UNAUTHENTICATED when the credential is missing, unknown, expired or
   *     names an identity the auth file no longer has, or when the caller's host has sent too
   *     many bad credentials lately
   */
  public Principal authenticate(@Nullable String credential, String remoteAddress, String field) {
    return check(credential, remoteAddress, field).from(BadCredentials.host(remoteAddress));
  }

  private Principal check(@Nullable String credential, String remoteAddress, String field) {
    Loaded l = loaded;
    if (l == null) {
      return Principal.ANONYMOUS;
    }
    if (credential == null || credential.isEmpty()) {
      throw RegistryException.unauthenticated(field, field + ": missing (expected: a token; this server "
          + "requires one, see docs/security.md)");
    }
    String host = BadCredentials.host(remoteAddress);
    bad.checkAllowed(host, field);
    long now = scheduler.currentTimeMillis();
    if (credential.startsWith(AccessTokens.PREFIX)) {
      AccessTokens.Claims claims = l.tokens() == null ? null : l.tokens().verify(credential);
      if (claims == null) {
        throw refuse(host, field, "an access token this server did not issue (or its tokenSecret changed)");
      }
      long expiresAt = claims.expiresAtSeconds() * 1000;
      // Signed by this server: not a guess, so not counted against the host (its client logs in again).
      if (expiresAt <= now) {
        throw RegistryException.unauthenticated(field, field + ": refused: the access token of \"" + claims.user() + "\" expired at "
            + Instant.ofEpochMilli(expiresAt) + "; log in again");
      }
      AuthFile.User user = l.file().user(claims.user());
      if (user == null) {
        throw RegistryException.unauthenticated(field, field + ": refused: user \"" + claims.user()
            + "\" is no longer in the auth file");
      }
      return new Principal(user.name(), user.grants(), expiresAt);
    }
    AuthFile.Token token = l.file().tokenWithHash(Passwords.sha256(credential));
    if (token == null) {
      throw refuse(host, field, "a token the auth file does not list");
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
   *     does (a host refused for bad credentials is refused with a certificate too); for a
   *     certificate, when its SANs map to no identity (naming the field that was missing and listing
   *     the SANs) or to more than one
   */
  public Principal authenticate(@Nullable String credential, List<java.security.cert.X509Certificate> peerCertificates,
      String remoteAddress, String field) {
    Loaded l = loaded;
    if (l == null) {
      return Principal.ANONYMOUS.from(BadCredentials.host(remoteAddress));
    }
    if ((credential != null && !credential.isEmpty()) || peerCertificates.isEmpty()) {
      return authenticate(credential, remoteAddress, field);
    }
    // A host refused for bad credentials has every credential refused unchecked, its certificate's too.
    bad.checkAllowed(BadCredentials.host(remoteAddress), field);
    ClientCertificates.Sans sans = ClientCertificates.sans(peerCertificates.get(0));
    List<AuthFile.Certificate> found = l.file().certificatesFor(sans);
    if (found.size() == 1) {
      AuthFile.Certificate c = found.get(0);
      return new Principal(c.name(), c.grants(), Long.MAX_VALUE, BadCredentials.host(remoteAddress));
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

  /** Bad credentials since start, on every port (0 with auth off). */
  public long failures() {
    return bad.failures();
  }

  /** Connections closed at accept since start because their host sent too many bad credentials. */
  public long connectionsRefused() {
    return bad.connectionsRefused();
  }

  /**
   * Whether a new connection from {@code remoteAddress} should be closed before its handshake:
   * auth is on and its host has sent too many bad credentials lately, so anything it would send
   * is refused unchecked anyway. Cheap (a map lookup); safe on a transport thread.
   */
  public boolean refusesConnection(String remoteAddress) {
    return loaded != null && bad.refusesConnection(BadCredentials.host(remoteAddress));
  }

  /** An access token and how long it is valid, as a login answers. */
  public record Login(String accessToken, Duration ttl, Principal principal) {}

  /**
   * Checks a user's password and issues an access token valid for {@link #tokenTtl}. Slow by
   * design (a PBKDF2 check); one runs at a time.
   *
   * @throws RegistryException UNAUTHENTICATED for an unknown user or a wrong password (one message
   *     for both), or a host with too many bad credentials lately; FAILED_PRECONDITION when auth is off
   */
  public Login login(String username, String password, String remoteAddress) {
    Loaded l = loaded;
    if (l == null || l.tokens() == null) {
      throw new RegistryException(RegistryException.Kind.FAILED_PRECONDITION, "",
          "login: this server has no users (auth is off, or the auth file lists none)");
    }
    String host = BadCredentials.host(remoteAddress);
    bad.checkAllowed(host, "password");
    AuthFile.User user = l.file().user(username);
    boolean ok;
    hashing.acquireUninterruptibly();
    try {
      // An unknown user costs a hash too, so timing does not tell which users exist.
      ok = Passwords.matches(password, user != null ? user.passwordHash() : DUMMY_HASH) && user != null;
    } finally {
      hashing.release();
    }
    if (!ok || user == null) {
      throw refuse(host, "password", "unknown user or wrong password"
          + (AuthFile.validName(username) ? " for \"" + username + "\"" : ""));
    }
    long expiresAt = scheduler.currentTimeMillis() + tokenTtl.toMillis();
    return new Login(l.tokens().issue(user.name(), expiresAt / 1000), tokenTtl,
        new Principal(user.name(), user.grants(), expiresAt / 1000 * 1000, host));
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

  /**
   * {@code p} as the auth file says now: its current grants, or null when its identity was removed
   * from the file or its credential has expired. {@link Principal#ANONYMOUS} stays itself.
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
      return new Principal(user.name(), user.grants(), p.expiresAtMillis(), p.from());
    }
    AuthFile.Token token = l.file().token(p.name());
    if (token != null) {
      return new Principal(token.name(), token.grants(), p.expiresAtMillis(), p.from());
    }
    AuthFile.Certificate certificate = l.file().certificate(p.name());
    return certificate == null ? null
        : new Principal(certificate.name(), certificate.grants(), p.expiresAtMillis(), p.from());
  }

  private RegistryException refuse(String host, String field, String why) {
    bad.failed(host, field + ": " + why);
    return RegistryException.unauthenticated(field, field + ": refused: " + why);
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
      bad.cleanUp();
      byte[] bytes;
      try {
        bytes = readBytes();
      } catch (IllegalArgumentException e) {
        problem(e.getMessage());
        bytes = l.content().getBytes(StandardCharsets.UTF_8);
      }
      if (!new String(bytes, StandardCharsets.UTF_8).equals(l.content())) {
        try {
          loaded = load(bytes, path);
          lastProblem = null;
          log.info("Auth file {} reloaded ({})", path, java.util.Objects.requireNonNull(loaded).file().summary());
        } catch (IllegalArgumentException e) {
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

  private void problem(@Nullable String message) {
    if (message != null && !message.equals(lastProblem)) {
      log.warn("{}; still using the last good auth file", message);
      lastProblem = message;
    }
  }

  private byte[] readBytes() {
    try {
      return Files.readAllBytes(java.util.Objects.requireNonNull(path));
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
  }
}
