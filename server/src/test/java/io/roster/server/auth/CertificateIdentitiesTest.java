package io.roster.server.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.server.model.RegistryException;
import io.roster.server.time.FakeScheduler;
import io.roster.server.tls.Pki;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Client certificates as identities (decision 80): the auth file's {@code certificates} list, the
 * {@code auth certificate} command, and how {@link Authenticator} maps a verified chain's SANs to a
 * principal.
 */
class CertificateIdentitiesTest {

  private static final String HERE = "/10.0.0.1:40000";
  private static final String FRONTEND = "spiffe://corp.example/ns/prod/sa/frontend";

  private static final Pki.Authority CA = Pki.newAuthority("clients-ca");

  @TempDir Path dir;
  private Path file;
  private final FakeScheduler scheduler = new FakeScheduler();
  private Authenticator auth;

  @BeforeEach
  void setUp() {
    file = dir.resolve("auth.json");
    command("init");
    command("certificate", "frontend", FRONTEND, "read@prod/orders-*");
    command("certificate", "batch", "Batch.Corp.Example", "write@prod");
    command("certificate", "prod-workloads", "spiffe://corp.example/ns/prod/*", "read@prod");
    command("certificate", "prod-jobs", "spiffe://corp.example/ns/prod/jobs/*", "write@prod/jobs-*");
    auth = Authenticator.open(file, Duration.ofMinutes(10), scheduler);
  }

  @AfterEach
  void tearDown() {
    auth.close();
  }

  private static List<X509Certificate> chain(String... sans) {
    return List.of(CA.issue("client", List.of(sans)).certificate(), CA.certificate());
  }

  private Principal byCertificate(String... sans) {
    return auth.authenticate(null, chain(sans), HERE, "authorization");
  }

  @Test
  void aUriSanMapsToItsIdentityWithItsGrants() {
    Principal p = byCertificate(FRONTEND);

    assertThat(p.name()).isEqualTo("frontend");
    assertThat(p.expiresAtMillis()).isEqualTo(Long.MAX_VALUE);
    assertThat(p.allows(Permission.READ, "prod", "DEFAULT_GROUP", "orders-eu")).isTrue();
    assertThat(p.allows(Permission.READ, "prod", "DEFAULT_GROUP", "payments")).isFalse();
    assertThat(p.allows(Permission.WRITE, "prod", "DEFAULT_GROUP", "orders-eu")).isFalse();
  }

  @Test
  void aDnsSanMapsInAnyCase() {
    assertThat(byCertificate("batch.corp.example").name()).isEqualTo("batch");
    assertThat(byCertificate("BATCH.corp.EXAMPLE").name()).isEqualTo("batch");
    assertThat(byCertificate("batch.corp.example").allows(Permission.WRITE, "prod", "g", "x")).isTrue();
  }

  @Test
  void aPrefixTakesEveryValidSpiffeIdUnderItsPathAndTheLongestPrefixWins() {
    assertThat(byCertificate("spiffe://corp.example/ns/prod/sa/payments").name()).isEqualTo("prod-workloads");
    assertThat(byCertificate("spiffe://corp.example/ns/prod/jobs/nightly").name()).isEqualTo("prod-jobs");
    assertThat(byCertificate(FRONTEND).name()).as("an exact entry wins over a prefix").isEqualTo("frontend");

    // A prefix ends where a path segment ends, and a name that is no valid SPIFFE ID never matches one.
    for (String outside : List.of("spiffe://corp.example/ns/production/sa/x", "spiffe://corp.example/ns/prod",
        "spiffe://corp.example/ns/prod/sa/../../../admin", "spiffe://corp.example/ns/prod/sa/%2e%2e",
        "spiffe://other.example/ns/prod/sa/x", "spiffe://corp.example/ns/prod/sa/x?y")) {
      assertThatThrownBy(() -> byCertificate(outside)).as(outside)
          .isInstanceOfSatisfying(RegistryException.class,
              e -> assertThat(e.kind()).isEqualTo(RegistryException.Kind.UNAUTHENTICATED));
    }
  }

  @Test
  void aCertificateThatMapsToNoIdentityIsAMissingCredentialListingItsSansAndIsNoBadGuess() {
    assertThatThrownBy(() -> byCertificate("spiffe://corp.example/ns/dev/sa/x", "dev.corp.example"))
        .isInstanceOfSatisfying(RegistryException.class, e -> {
          assertThat(e.kind()).isEqualTo(RegistryException.Kind.UNAUTHENTICATED);
          assertThat(e.field()).isEqualTo("authorization");
          assertThat(e.getMessage()).isEqualTo("authorization: missing (expected: a token, or a client certificate "
              + "the auth file maps to an identity; this certificate's SANs map to no identity: "
              + "URI:spiffe://corp.example/ns/dev/sa/x, DNS:dev.corp.example; see docs/security.md)");
        });
    assertThatThrownBy(() -> byCertificate())
        .hasMessageContaining("this certificate has no URI or DNS SAN");
    String[] many = new String[20];
    for (int i = 0; i < many.length; i++) {
      many[i] = "host-" + i + ".dev.corp.example";
    }
    assertThatThrownBy(() -> byCertificate(many))
        .hasMessageContaining("DNS:host-7.dev.corp.example and 12 more; see docs/security.md)")
        .hasMessageNotContaining("host-8.");
    assertThat(auth.failures()).as("counted as bad credentials").isZero();
  }

  @Test
  void aTokenWinsOverTheCertificateAndABadTokenNeverFallsBackToIt() {
    String token = command("token", "deployer", "admin@*").trim();
    scheduler.advance(Authenticator.RELOAD_EVERY);

    assertThat(auth.authenticate(token, chain(FRONTEND), HERE, "authorization").name()).isEqualTo("deployer");
    assertThatThrownBy(() -> auth.authenticate("rst_wrong", chain(FRONTEND), HERE, "authorization"))
        .hasMessageContaining("a token the auth file does not list");
    assertThat(auth.authenticate("", chain(FRONTEND), HERE, "authorization").name()).isEqualTo("frontend");
    assertThatThrownBy(() -> auth.authenticate(null, List.of(), HERE, "authorization"))
        .hasMessageStartingWith("authorization: missing (expected: a token;");
  }

  /** One name, one identity: `auth certificate` takes a user's or a token's name only with --replace, and they its. */
  @Test
  void aCertificateTakesTheNameOfAnotherKindOfIdentityOnlyWhenToldTo() {
    command("token", "deployer", "read@*");
    assertThatThrownBy(() -> command("certificate", "deployer", "spiffe://corp.example/ns/prod/sa/deployer", "read@*"))
        .hasMessageContaining("\"deployer\" is a token of");
    assertThatThrownBy(() -> command("token", "frontend", "read@*"))
        .hasMessageContaining("\"frontend\" is a certificate of");
    command("certificate", "deployer", "spiffe://corp.example/ns/prod/sa/deployer", "read@*", "--replace");
  }

  /** A valid credential is never refused for what its host sent (decision 79): a certificate neither. */
  @Test
  void aHostThatSentManyBadTokensIsStillItsCertificatesIdentity() {
    String guesser = "/10.0.0.9:5000";
    for (int i = 0; i < 200; i++) {
      assertThatThrownBy(() -> auth.authenticate("rst_wrong", List.of(), guesser, "authorization"))
          .hasMessageContaining("does not list");
    }

    assertThat(auth.authenticate(null, chain(FRONTEND), guesser, "authorization").name()).isEqualTo("frontend");
  }

  @Test
  void aCertificateWhoseSansMapToTwoIdentitiesIsRefused() {
    assertThatThrownBy(() -> byCertificate(FRONTEND, "batch.corp.example"))
        .isInstanceOfSatisfying(RegistryException.class, e -> {
          assertThat(e.kind()).isEqualTo(RegistryException.Kind.UNAUTHENTICATED);
          assertThat(e.getMessage()).contains("map to more than one identity")
              .contains("\"frontend\" by " + FRONTEND).contains("\"batch\" by Batch.Corp.Example");
        });
  }

  @Test
  void removingACertificateEntryEndsItsIdentityAtTheNextCheckAndAChangeOfGrantsApplies() {
    Principal frontend = byCertificate(FRONTEND);
    Principal batch = byCertificate("batch.corp.example");

    command("remove", "frontend");
    command("certificate", "batch", "batch.corp.example", "read@prod");
    scheduler.advance(Authenticator.RELOAD_EVERY);

    assertThat(auth.revalidate(frontend)).isNull();
    assertThat(auth.revalidate(batch).allows(Permission.WRITE, "prod", "g", "x")).isFalse();
    assertThat(auth.revalidate(batch).allows(Permission.READ, "prod", "g", "x")).isTrue();
    assertThat(byCertificate(FRONTEND).name()).as("now under the prefix entry").isEqualTo("prod-workloads");
  }

  @Test
  void theFileRefusesBadCertificateEntriesNamingFieldValueAndExpectation() throws IOException {
    String expected = "(expected: " + ClientCertificates.EXPECTED + ")";
    for (String san : List.of("https://corp.example/frontend", "spiffe://Corp.Example/ns/prod", "spiffe://corp.example",
        "spiffe://corp.example/", "spiffe://corp.example/a/../b", "spiffe://corp.example/a//b",
        "spiffe://corp.example/a%2Fb", "spiffe://corp.example/ns/*/sa", "spiffe://corp.example/ns/prod*",
        "*.corp.example", "corp..example", "-corp.example", "corp.example.", "URI:spiffe://corp.example/x", "")) {
      assertThatThrownBy(() -> parse(entry("c", "\"" + san + "\"")))
          .as(san).hasMessage("auth file " + file + ": certificates[0].san: " + san + " " + expected);
    }
    assertThatThrownBy(() -> parse(entry("c", "42")))
        .hasMessage("auth file " + file + ": certificates[0].san: 42 (expected: a string)");
    assertThatThrownBy(() -> parse("{\"name\": \"c\", \"grants\": []}"))
        .hasMessage("auth file " + file + ": certificates[0].san: (missing) (expected: a string)");
    assertThatThrownBy(() -> parse("{\"name\": \"c\", \"san\": \"a.example\", \"sans\": [], \"grants\": []}"))
        .hasMessage("auth file " + file + ": certificates[0].sans: (present) (expected: one of [grants, name, san])");
    assertThatThrownBy(() -> parse(entry("c", "\"a.example\""), entry("d", "\"A.EXAMPLE\"")))
        .hasMessage("auth file " + file + ": certificates[1].san: A.EXAMPLE (expected: a SAN no other certificate "
            + "entry has)");
    assertThatThrownBy(() -> parse(entry("c", "\"a.example\""), entry("c", "\"b.example\"")))
        .hasMessage("auth file " + file + ": certificates[1].name: c (expected: a name no other user, token or "
            + "certificate has)");
    assertThatThrownBy(() -> parse("{\"name\": \"c\", \"san\": \"a.example\", \"grants\": [{\"permission\": \"read\"}]}"))
        .hasMessage("auth file " + file + ": certificates[0].grants[0].namespace: (missing) (expected: a string)");

    AuthFile good = parse(entry("c", "\"" + FRONTEND + "\""), entry("d", "\"spiffe://corp.example/*\""),
        entry("e", "\"frontend-1.corp.example\""));
    assertThat(good.summary()).isEqualTo("0 users, 0 tokens, 3 certificates");
  }

  @Test
  void theCommandAddsReplacesAndRemovesCertificatesAndRefusesABadSan() throws IOException {
    assertThat(command("certificate", "frontend", FRONTEND, "read@prod", "read@staging"))
        .isEqualTo("Certificate frontend (SAN " + FRONTEND + ") written to " + file + "\n");
    assertThat(Files.readString(file)).containsOnlyOnce("\"frontend\"");
    assertThat(AuthFile.read(file).certificate("frontend").grants()).hasSize(2);

    assertThatThrownBy(() -> command("certificate", "front2", "https://corp.example/frontend", "read@prod"))
        .hasMessage("SAN: \"https://corp.example/frontend\" (expected: " + ClientCertificates.EXPECTED + ")");
    assertThatThrownBy(() -> command("certificate", "front2", FRONTEND))
        .hasMessageStartingWith("GRANT: none given");
    assertThatThrownBy(() -> command("certificate", "front2", FRONTEND, "read@prod"))
        .as("the same SAN under another name").hasMessageContaining("expected: a SAN no other certificate entry has");

    command("remove", "frontend");
    assertThat(AuthFile.read(file).certificate("frontend")).isNull();
  }

  private AuthFile parse(String... entries) {
    String json = "{\"version\": 1, \"certificates\": [" + String.join(", ", entries) + "]}";
    return AuthFile.parse(json.getBytes(StandardCharsets.UTF_8), file.toString());
  }

  private static String entry(String name, String san) {
    return "{\"name\": \"" + name + "\", \"san\": " + san + ", \"grants\": [{\"permission\": \"read\", "
        + "\"namespace\": \"prod\"}]}";
  }

  private String command(String... args) {
    List<String> all = new java.util.ArrayList<>(List.of(args));
    all.add(1, file.toString());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    new AuthCommand(new PrintStream(out, true, StandardCharsets.UTF_8), Map.of(),
        new BufferedReader(new StringReader(""))).run(all);
    return out.toString(StandardCharsets.UTF_8);
  }
}
