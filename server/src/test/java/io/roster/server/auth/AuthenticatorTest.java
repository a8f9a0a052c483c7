package io.roster.server.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.server.model.RegistryException;
import io.roster.server.time.FakeScheduler;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuthenticatorTest {

  private static final String PASSWORD = "correct horse battery";
  private static final String HERE = "/10.0.0.1:40000";

  @TempDir Path dir;
  private Path file;
  private final FakeScheduler scheduler = new FakeScheduler();
  private Authenticator auth;
  private String deployerToken;

  @BeforeEach
  void setUp() {
    file = dir.resolve("auth.json");
    command("init");
    command("user", "ops", "admin@*");
    deployerToken = command("token", "deployer", "write@prod/orders-*", "read@*").trim();
    // Logins refused unchecked answered at once, not after a second of the fake clock (one test says why).
    auth = Authenticator.open(file, Duration.ofMinutes(10), scheduler, Duration.ZERO);
  }

  @AfterEach
  void tearDown() {
    auth.close();
  }

  @Test
  void aStaticTokenProvesItsNameAndGrants() {
    Principal p = auth.authenticate(deployerToken, HERE, "hello.token");

    assertThat(p.name()).isEqualTo("deployer");
    assertThat(p.allows(Permission.WRITE, "prod", "DEFAULT_GROUP", "orders-eu")).isTrue();
    assertThat(p.allows(Permission.WRITE, "prod", "DEFAULT_GROUP", "payments")).isFalse();
    assertThat(p.allows(Permission.READ, "staging", "DEFAULT_GROUP", "payments")).isTrue();
    assertThat(p.allows(Permission.ADMIN, "prod", "DEFAULT_GROUP", "orders-eu")).isFalse();
  }

  @Test
  void aMissingOrUnknownCredentialIsUnauthenticatedNamingItsField() {
    assertThatThrownBy(() -> auth.authenticate("", HERE, "hello.token"))
        .isInstanceOfSatisfying(RegistryException.class, e -> {
          assertThat(e.kind()).isEqualTo(RegistryException.Kind.UNAUTHENTICATED);
          assertThat(e.field()).isEqualTo("hello.token");
          assertThat(e.getMessage()).startsWith("hello.token: missing");
        });
    assertThatThrownBy(() -> auth.authenticate("rst_guessed", HERE, "hello.token"))
        .isInstanceOfSatisfying(RegistryException.class, e -> {
          assertThat(e.kind()).isEqualTo(RegistryException.Kind.UNAUTHENTICATED);
          assertThat(e.getMessage()).contains("a token the auth file does not list");
        });
  }

  @Test
  void aLoginIssuesAnAccessTokenThatExpiresAfterTheTtl() {
    Authenticator.Login login = login("ops", PASSWORD, HERE);

    assertThat(login.ttl()).isEqualTo(Duration.ofMinutes(10));
    Principal p = auth.authenticate(login.accessToken(), HERE, "accessToken");
    assertThat(p.name()).isEqualTo("ops");
    assertThat(p.allowsAll(Permission.ADMIN, "*")).isTrue();

    scheduler.advance(Duration.ofMinutes(10).plusSeconds(1));
    assertThat(auth.revalidate(p)).isNull();
    assertThatThrownBy(() -> auth.authenticate(login.accessToken(), HERE, "accessToken"))
        .isInstanceOfSatisfying(RegistryException.class, e -> assertThat(e.getMessage()).contains("expired"));
  }

  @Test
  void aWrongPasswordOrUnknownUserGetsOneAnswer() {
    assertThat(attempt("ops", "wrong password!", HERE)).isEqualTo(
        new Authenticator.Refused("password: refused: unknown user or wrong password for \"ops\""));
    assertThat(attempt("nobody", PASSWORD, HERE)).isEqualTo(
        new Authenticator.Refused("password: refused: unknown user or wrong password for \"nobody\""));
    assertThat(auth.failures()).isEqualTo(2);
  }

  @Test
  void aTamperedAccessTokenIsRefused() {
    String token = login("ops", PASSWORD, HERE).accessToken();
    String[] parts = token.split("\\.", -1);
    String forged = parts[0] + "." + parts[1] + "." + (Long.parseLong(parts[2]) + 3600) + "." + parts[3] + "." + parts[4];

    assertThatThrownBy(() -> auth.authenticate(forged, HERE, "accessToken"))
        .hasMessageContaining("did not issue");
  }

  @Test
  void aReloadThatRemovesAnIdentityEndsItAndOneThatChangesGrantsChangesThem() {
    Principal deployer = auth.authenticate(deployerToken, HERE, "hello.token");
    Principal ops = auth.authenticate(login("ops", PASSWORD, HERE).accessToken(), HERE, "accessToken");
    int[] reloads = {0};
    auth.onCheck(() -> reloads[0]++);

    command("remove", "ops");
    command("user", "ops2", "read@prod");
    scheduler.advance(Authenticator.RELOAD_EVERY);

    assertThat(reloads[0]).isEqualTo(1);
    assertThat(auth.revalidate(ops)).isNull();
    assertThat(auth.revalidate(deployer)).isEqualTo(deployer);

    Path tokens = dir.resolve("auth.json");
    command("token", "deployer", "read@prod"); // a new token under the same name: the old one is gone
    scheduler.advance(Authenticator.RELOAD_EVERY);
    assertThat(Files.exists(tokens)).isTrue();
    assertThat(auth.revalidate(deployer).allows(Permission.WRITE, "prod", "DEFAULT_GROUP", "orders-eu")).isFalse();
    assertThatThrownBy(() -> auth.authenticate(deployerToken, HERE, "hello.token"))
        .hasMessageContaining("revoked: token \"deployer\" was replaced");
  }

  @Test
  void aBrokenFileAtReloadKeepsTheLastGoodOne() throws IOException {
    long started = scheduler.currentTimeMillis();
    String good = Files.readString(file);
    Files.writeString(file, "{\"version\": 1, \"users\": [{\"name\": \"x\"}]}");
    scheduler.advance(Authenticator.RELOAD_EVERY);

    assertThat(auth.authenticate(deployerToken, HERE, "hello.token").name()).isEqualTo("deployer");
    assertThat(auth.reloads().errors()).isEqualTo(1);
    assertThat(auth.reloads().ok()).isZero();
    assertThat(auth.reloads().loadedMillis()).isEqualTo(started);
    scheduler.advance(Authenticator.RELOAD_EVERY); // still broken: counted at every check
    assertThat(auth.reloads().errors()).isEqualTo(2);

    Files.writeString(file, good);
    command("user", "ops2", "read@prod"); // a good file, changed
    scheduler.advance(Authenticator.RELOAD_EVERY);
    assertThat(auth.reloads().ok()).isEqualTo(1);
    assertThat(auth.reloads().errors()).isEqualTo(2);
    assertThat(auth.reloads().loadedMillis()).isEqualTo(scheduler.currentTimeMillis());
  }

  @Test
  void aFloodOfBadTokensNeverRefusesAValidTokenOrALoginFromTheirHost() {
    for (int i = 0; i < 200; i++) {
      assertThatThrownBy(() -> auth.authenticate("rst_wrong", "/10.0.0.9:5001", "hello.token"))
          .hasMessage("hello.token: refused: a token the auth file does not list");
    }

    assertThat(auth.failures()).isEqualTo(200);
    assertThat(auth.authenticate(deployerToken, "/10.0.0.9:6000", "hello.token").name()).isEqualTo("deployer");
    assertThat(login("ops", PASSWORD, "/10.0.0.9:6001").principal().name()).isEqualTo("ops");
    assertThat(auth.loginsThrottled()).isZero();
  }

  @Test
  void guessedPasswordsOfOneUserHaveThatPairRefusedUncheckedWithWhenToRetry() {
    for (int i = 0; i < Guesses.PAIR_LIMIT; i++) {
      assertThat(attempt("ops", "guess number " + i, "/10.0.0.9:5001")).isInstanceOf(Authenticator.Refused.class);
    }
    scheduler.advance(Duration.ofSeconds(15));

    assertThat(attempt("ops", PASSWORD, "/10.0.0.9:5002")).isEqualTo(new Authenticator.Throttled(
        "password: 5 failed logins of \"ops\" from 10.0.0.9 within 60 s; its logins are not checked until the "
            + "window ends (retry in 45 s)", Duration.ofSeconds(45)));
    assertThat(auth.loginsThrottled()).isEqualTo(1);
    assertThat(login("ops", PASSWORD, "/10.0.0.8:5003").principal().name()).as("from another host").isEqualTo("ops");

    scheduler.advance(Duration.ofSeconds(45));
    assertThat(login("ops", PASSWORD, "/10.0.0.9:5004").principal().name()).isEqualTo("ops");
  }

  @Test
  void anApplicationRetryingTheSameWrongPasswordIsAnsweredAtOnceAndIsNoGuesser() {
    for (int i = 0; i < 3 * Guesses.PAIR_LIMIT; i++) {
      Authenticator.LoginResult r = attempt("ops", "last year's password", HERE);
      assertThat(r).isInstanceOf(Authenticator.Refused.class);
      assertThat(((Authenticator.Refused) r).message()).startsWith("password: refused: unknown user or wrong password "
          + "for \"ops\"").contains(i == 0 ? "" : "; not checked again");
    }

    assertThat(auth.failures()).isEqualTo(3 * Guesses.PAIR_LIMIT);
    assertThat(auth.loginsThrottled()).isZero();
    assertThat(login("ops", PASSWORD, HERE).principal().name()).isEqualTo("ops");
    assertThatThrownBy(() -> auth.authenticate("", HERE, "accessToken")).hasMessage("accessToken: missing (expected: "
        + "a token; this server requires one, see docs/security.md)");
  }

  @Test
  void aMissingAccessTokenAfterAFailedLoginFromItsHostSaysTheLoginFailed() {
    attempt("ops", "last year's password", HERE);
    scheduler.advance(Duration.ofSeconds(3));

    assertThatThrownBy(() -> auth.authenticate(null, HERE, "accessToken")).hasMessage("accessToken: missing (expected: "
        + "a token; this server requires one, see docs/security.md); the last login from 10.0.0.1, 3 s ago, failed "
        + "(password: unknown user or wrong password for \"ops\"), and a client given a username and password sends "
        + "no token when its login fails");
    assertThatThrownBy(() -> auth.authenticate(null, "/10.0.0.2:1", "accessToken")).hasMessageEndingWith("security.md)");
  }

  @Test
  void aLoginRefusedUncheckedIsAnsweredASecondLaterSoThatAGuesserCannotAskAtOnceAgain() {
    auth.close();
    auth = Authenticator.open(file, Duration.ofMinutes(10), scheduler);
    for (int i = 0; i < Guesses.PAIR_LIMIT; i++) {
      assertThat(attempt("ops", "guess number " + i, HERE)).isInstanceOf(Authenticator.Refused.class);
    }

    java.util.concurrent.CompletableFuture<Authenticator.LoginResult> throttled = auth.login("ops", "another", HERE);
    scheduler.advance(Authenticator.THROTTLED_ANSWER_DELAY.minusMillis(1));
    assertThat(throttled).isNotDone();
    scheduler.advance(Duration.ofMillis(1));
    assertThat(throttled).isCompletedWithValueMatching(r -> r instanceof Authenticator.Throttled);
  }

  @Test
  void aPasswordSprayFromAHostLeavesItsProvenUsersLoggingIn() {
    command("user", "dev", "read@*");
    scheduler.advance(Authenticator.RELOAD_EVERY);
    login("ops", PASSWORD, "/10.0.0.9:5000"); // ops has logged in from this host before
    for (int i = 0; i < Guesses.HOST_LIMIT; i++) {
      assertThat(attempt("user-" + i, PASSWORD, "/10.0.0.9:5001")).isInstanceOf(Authenticator.Refused.class);
    }

    assertThat(attempt("dev", PASSWORD, "/10.0.0.9:5002")).isInstanceOf(Authenticator.Throttled.class);
    assertThat(login("ops", PASSWORD, "/10.0.0.9:5003").principal().name()).isEqualTo("ops");
    assertThat(login("dev", PASSWORD, "/10.0.0.7:5004").principal().name()).isEqualTo("dev");
  }

  @Test
  void aRemovedOrReplacedTokenIsRefusedAsRevokedSayingWhenAndIsNotCounted() {
    String ci = command("token", "ci", "read@*").trim();
    scheduler.advance(Authenticator.RELOAD_EVERY);
    assertThat(auth.authenticate(ci, HERE, "authorization").name()).isEqualTo("ci");

    command("token", "deployer", "read@*"); // rotated
    command("remove", "ci");
    scheduler.advance(Authenticator.RELOAD_EVERY);
    String at = java.time.Instant.ofEpochMilli(scheduler.currentTimeMillis()).toString();

    assertThatThrownBy(() -> auth.authenticate(deployerToken, HERE, "hello.token"))
        .isInstanceOfSatisfying(RegistryException.class, e -> {
          assertThat(e.kind()).isEqualTo(RegistryException.Kind.UNAUTHENTICATED);
          assertThat(e.getMessage()).isEqualTo(
              "hello.token: refused: revoked: token \"deployer\" was replaced in the auth file at " + at);
        });
    assertThatThrownBy(() -> auth.authenticate(ci, HERE, "authorization"))
        .hasMessage("authorization: refused: revoked: token \"ci\" was removed from the auth file at " + at);
    assertThat(auth.failures()).isZero();
    assertThat(auth.revokedRefused()).isEqualTo(2);
  }

  @Test
  void aRevokedTokenIsRememberedForADay() {
    command("remove", "deployer");
    scheduler.advance(Authenticator.RELOAD_EVERY);
    scheduler.advance(Authenticator.REMEMBER_REVOKED);

    assertThatThrownBy(() -> auth.authenticate(deployerToken, HERE, "hello.token"))
        .hasMessage("hello.token: refused: a token the auth file does not list");
  }

  @Test
  void aPasswordChangeEndsTheAccessTokensIssuedBeforeItAndTheirSessions() {
    String before = login("ops", PASSWORD, HERE).accessToken();
    Principal session = auth.authenticate(before, HERE, "accessToken");

    commandWithPassword("a brand new password", "user", "ops", "admin@*");
    scheduler.advance(Authenticator.RELOAD_EVERY);
    String at = java.time.Instant.ofEpochMilli(scheduler.currentTimeMillis()).toString();

    assertThatThrownBy(() -> auth.authenticate(before, HERE, "accessToken"))
        .isInstanceOfSatisfying(RegistryException.class, e -> {
          assertThat(e.kind()).isEqualTo(RegistryException.Kind.UNAUTHENTICATED);
          assertThat(e.getMessage()).isEqualTo("accessToken: refused: revoked: the password of \"ops\" changed at "
              + at + " after this token was issued; log in again");
        });
    assertThat(auth.revalidate(session)).isNull();
    assertThat(auth.ended(session)).isEqualTo("\"ops\" was revoked: the password of \"ops\" changed at " + at
        + " after this token was issued");
    assertThat(auth.failures()).isZero();
    assertThat(attempt("ops", PASSWORD, HERE)).isInstanceOf(Authenticator.Refused.class);
    String after = login("ops", "a brand new password", HERE).accessToken();
    assertThat(auth.authenticate(after, HERE, "accessToken").name()).isEqualTo("ops");
  }

  @Test
  void theSamePasswordGivenAgainChangesOnlyTheGrantsAndKeepsTheTokens() {
    String token = login("ops", PASSWORD, HERE).accessToken();
    Principal session = auth.authenticate(token, HERE, "accessToken");

    assertThat(command("user", "ops", "read@*")).contains("same password: only its grants changed");
    scheduler.advance(Authenticator.RELOAD_EVERY);

    assertThat(auth.authenticate(token, HERE, "accessToken").allowsAll(Permission.ADMIN, "*")).isFalse();
    assertThat(auth.revalidate(session)).isNotNull();
  }

  @Test
  void anAccessTokenOfARemovedUserIsRevokedAndOneOfAnEarlierBuildIsStillRead() throws Exception {
    String token = login("ops", PASSWORD, HERE).accessToken();
    // A token as the build before this one wrote it: no password stamp.
    String body = AccessTokens.PREFIX + java.util.Base64.getUrlEncoder().withoutPadding()
        .encodeToString("ops".getBytes(StandardCharsets.UTF_8)) + "." + (scheduler.currentTimeMillis() / 1000 + 600);
    javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
    mac.init(new javax.crypto.spec.SecretKeySpec(java.util.Base64.getUrlDecoder().decode(
        new com.fasterxml.jackson.databind.ObjectMapper().readTree(file.toFile()).path("tokenSecret").asText()),
        "HmacSHA256"));
    String legacy = body + "." + java.util.Base64.getUrlEncoder().withoutPadding()
        .encodeToString(mac.doFinal(body.getBytes(StandardCharsets.UTF_8)));
    assertThat(auth.authenticate(legacy, HERE, "accessToken").name()).isEqualTo("ops");

    command("remove", "ops");
    scheduler.advance(Authenticator.RELOAD_EVERY);
    String at = java.time.Instant.ofEpochMilli(scheduler.currentTimeMillis()).toString();

    assertThatThrownBy(() -> auth.authenticate(token, HERE, "accessToken"))
        .hasMessage("accessToken: refused: revoked: user \"ops\" was removed from the auth file at " + at);
    assertThat(auth.failures()).isZero();
  }

  @Test
  void offMeansEveryoneIsAnonymousWithEveryPermission() {
    Authenticator off = Authenticator.off();

    assertThat(off.enabled()).isFalse();
    assertThat(off.authenticate(null, HERE, "hello.token")).as("anonymous, from where it came").isEqualTo(Principal.ANONYMOUS.from("10.0.0.1"));
    assertThat(Principal.ANONYMOUS.allowsAll(Permission.ADMIN, "*")).isTrue();
  }

  @Test
  void theFileIsCheckedStrictlyNamingFieldAndValue() throws IOException {
    Files.writeString(file, "{\"version\": 1, \"tokens\": [{\"name\": \"t\", \"sha256\": \"" + "a".repeat(64)
        + "\", \"grants\": [{\"permission\": \"wrte\", \"namespace\": \"prod\"}]}]}");
    assertThatThrownBy(() -> AuthFile.read(file))
        .hasMessage("auth file " + file + ": tokens[0].grants[0].permission: wrte (expected: read, write or admin)");

    Files.writeString(file, "{\"version\": 1, \"user\": []}");
    assertThatThrownBy(() -> AuthFile.read(file)).hasMessageContaining(": user: (present) (expected: one of");

    Files.writeString(file, "{\"version\": 1, \"users\": [{\"name\": \"u\", \"password\": \"plain\", \"grants\": []}],"
        + " \"tokenSecret\": \"" + Passwords.randomSecret(32) + "\"}");
    assertThatThrownBy(() -> AuthFile.read(file)).hasMessageContaining("users[0].password: (hidden)");
  }

  @Test
  void grantPatternsMatchServicesOrGroupAndService() {
    assertThat(new Grant(Permission.READ, "prod", "orders-*").allows(Permission.READ, "prod", "g", "orders-1")).isTrue();
    assertThat(new Grant(Permission.READ, "prod", "orders-*").allows(Permission.READ, "prod", "g", "order")).isFalse();
    assertThat(new Grant(Permission.READ, "prod", "g@@*").allows(Permission.READ, "prod", "g", "x")).isTrue();
    assertThat(new Grant(Permission.READ, "prod", "g@@*").allows(Permission.READ, "prod", "h", "x")).isFalse();
    assertThat(new Grant(Permission.READ, "*", "*a*b").allows(Permission.READ, "any", "g", "xaxxb")).isTrue();
    assertThat(new Grant(Permission.READ, "prod", "*").allows(Permission.READ, "staging", "g", "x")).isFalse();
    assertThat(new Grant(Permission.WRITE, "prod", "*").allowsAll(Permission.READ, "prod")).isTrue();
    assertThat(new Grant(Permission.WRITE, "prod", "x*").allowsAll(Permission.READ, "prod")).isFalse();
  }

  @Test
  void theCommandReplacesAUserByATokenOrATokenByAUserOnlyWhenToldTo() throws IOException {
    String before = Files.readString(file);
    assertThatThrownBy(() -> command("token", "ops", "read@*")).hasMessage("NAME: \"ops\" is a user of " + file
        + " (expected: a name no user has; `auth token` replaces a user only when given --replace, which ends its "
        + "sessions)");
    assertThatThrownBy(() -> command("user", "deployer", "read@*")).hasMessage("NAME: \"deployer\" is a token of "
        + file + " (expected: a name no token has; `auth user` replaces a token only when given --replace, which ends "
        + "its sessions)");
    assertThat(Files.readString(file)).isEqualTo(before);

    String rotated = command("token", "deployer", "read@*").trim(); // the same kind: a rotation, as ever
    assertThat(rotated).startsWith("rst_").isNotEqualTo(deployerToken);
    command("user", "deployer", "read@*", "--replace");
    command("token", "ops", "--replace", "read@*");
    AuthFile read = AuthFile.read(file);
    assertThat(read.user("deployer")).isNotNull();
    assertThat(read.token("deployer")).isNull();
    assertThat(read.token("ops")).isNotNull();
    assertThat(read.user("ops")).isNull();
    assertThatThrownBy(() -> command("remove", "ops", "--replace"))
        .hasMessageStartingWith("--replace: only `auth user`, `auth token` and `auth certificate` take it");
  }

  @Test
  void theCommandRefusesBadGrantsAndShortPasswords() {
    assertThatThrownBy(() -> command("token", "t", "write:prod"))
        .hasMessageStartingWith("GRANT: \"write:prod\" (expected: PERMISSION@NAMESPACE[/SERVICES]");
    assertThatThrownBy(() -> new AuthCommand(new PrintStream(new ByteArrayOutputStream()), Map.of(),
        new BufferedReader(new StringReader("short\n"))).run(List.of("user", file.toString(), "u", "read@*")))
        .hasMessage("password: 5 characters (expected: at least 12)");
    assertThatThrownBy(() -> command("init")).hasMessageContaining("exists already");
  }

  private String command(String... args) {
    return commandWithPassword(PASSWORD, args);
  }

  private String commandWithPassword(String password, String... args) {
    List<String> all = new java.util.ArrayList<>(List.of(args));
    all.add(1, file.toString());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    new AuthCommand(new PrintStream(out, true, StandardCharsets.UTF_8), Map.of(),
        new BufferedReader(new StringReader(password + "\n"))).run(all);
    return out.toString(StandardCharsets.UTF_8);
  }

  /** A login, waited for (its check runs on the authenticator's thread). */
  private Authenticator.LoginResult attempt(String user, String password, String from) {
    return auth.login(user, password, from).orTimeout(30, java.util.concurrent.TimeUnit.SECONDS).join();
  }

  private Authenticator.Login login(String user, String password, String from) {
    Authenticator.LoginResult r = attempt(user, password, from);
    assertThat(r).isInstanceOf(Authenticator.Login.class);
    return (Authenticator.Login) r;
  }
}
