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
    auth = Authenticator.open(file, Duration.ofMinutes(10), scheduler);
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
    Authenticator.Login login = auth.login("ops", PASSWORD, HERE);

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
    assertThatThrownBy(() -> auth.login("ops", "wrong password!", HERE))
        .isInstanceOfSatisfying(RegistryException.class, e -> {
          assertThat(e.kind()).isEqualTo(RegistryException.Kind.UNAUTHENTICATED);
          assertThat(e.getMessage()).contains("unknown user or wrong password");
        });
    assertThatThrownBy(() -> auth.login("nobody", PASSWORD, HERE))
        .hasMessageContaining("unknown user or wrong password");
  }

  @Test
  void aTamperedAccessTokenIsRefused() {
    String token = auth.login("ops", PASSWORD, HERE).accessToken();
    String[] parts = token.split("\\.");
    String forged = parts[0] + "." + parts[1] + "." + (Long.parseLong(parts[2]) + 3600) + "." + parts[3];

    assertThatThrownBy(() -> auth.authenticate(forged, HERE, "accessToken"))
        .hasMessageContaining("did not issue");
  }

  @Test
  void aReloadThatRemovesAnIdentityEndsItAndOneThatChangesGrantsChangesThem() {
    Principal deployer = auth.authenticate(deployerToken, HERE, "hello.token");
    Principal ops = auth.authenticate(auth.login("ops", PASSWORD, HERE).accessToken(), HERE, "accessToken");
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
        .hasMessageContaining("does not list");
  }

  @Test
  void aBrokenFileAtReloadKeepsTheLastGoodOne() throws IOException {
    Files.writeString(file, "{\"version\": 1, \"users\": [{\"name\": \"x\"}]}");
    scheduler.advance(Authenticator.RELOAD_EVERY);

    assertThat(auth.authenticate(deployerToken, HERE, "hello.token").name()).isEqualTo("deployer");
  }

  @Test
  void tenBadCredentialsFromOneHostRefuseItUncheckedForAMinuteButNotOtherHosts() {
    for (int i = 0; i < BadCredentials.LIMIT; i++) {
      assertThatThrownBy(() -> auth.authenticate("rst_wrong", "/10.0.0.9:" + (5000 + 1), "hello.token"))
          .hasMessageContaining("does not list");
    }

    assertThatThrownBy(() -> auth.authenticate(deployerToken, "/10.0.0.9:6000", "hello.token"))
        .isInstanceOfSatisfying(RegistryException.class, e -> {
          assertThat(e.kind()).isEqualTo(RegistryException.Kind.UNAUTHENTICATED);
          assertThat(e.getMessage()).contains("refused unchecked").contains("10.0.0.9");
        });
    assertThatThrownBy(() -> auth.login("ops", PASSWORD, "/10.0.0.9:6001")).hasMessageContaining("refused unchecked");
    assertThat(auth.authenticate(deployerToken, HERE, "hello.token").name()).isEqualTo("deployer");

    scheduler.advance(BadCredentials.WINDOW.plusSeconds(1));
    assertThat(auth.authenticate(deployerToken, "/10.0.0.9:6002", "hello.token").name()).isEqualTo("deployer");
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
  void theCommandRefusesBadGrantsAndShortPasswords() {
    assertThatThrownBy(() -> command("token", "t", "write:prod"))
        .hasMessageStartingWith("GRANT: \"write:prod\" (expected: PERMISSION@NAMESPACE[/SERVICES]");
    assertThatThrownBy(() -> new AuthCommand(new PrintStream(new ByteArrayOutputStream()), Map.of(),
        new BufferedReader(new StringReader("short\n"))).run(List.of("user", file.toString(), "u", "read@*")))
        .hasMessage("password: 5 characters (expected: at least 12)");
    assertThatThrownBy(() -> command("init")).hasMessageContaining("exists already");
  }

  private String command(String... args) {
    List<String> all = new java.util.ArrayList<>(List.of(args));
    all.add(1, file.toString());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    new AuthCommand(new PrintStream(out, true, StandardCharsets.UTF_8), Map.of(),
        new BufferedReader(new StringReader(PASSWORD + "\n"))).run(all);
    return out.toString(StandardCharsets.UTF_8);
  }
}
