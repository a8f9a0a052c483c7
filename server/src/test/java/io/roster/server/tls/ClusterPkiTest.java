package io.roster.server.tls;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code roster-server.jar pki}: a cluster's CA and member certificates, made once and then kept. */
class ClusterPkiTest {

  @TempDir Path dir;
  final ByteArrayOutputStream out = new ByteArrayOutputStream();
  final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... args) {
    out.reset();
    err.reset();
    return ClusterPki.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void makesACaAndACertificatePerMemberNamingItsHost() throws Exception {
    assertThat(run("--dir", dir.toString(), "--members", "roster1:9849,roster2:9849,10.0.0.3:9849")).isZero();
    X509Certificate ca = Pki.readCertificate(dir.resolve("ca.crt"));
    for (String name : List.of("roster1", "roster2", "10.0.0.3")) {
      X509Certificate cert = Pki.readCertificate(dir.resolve(name + ".crt"));
      cert.verify(ca.getPublicKey());
      assertThat(Pki.keyMatches(cert, Pki.readPrivateKey(dir.resolve(name + ".key")))).isTrue();
      assertThat(cert.getSubjectAlternativeNames()).containsExactly(List.of(name.startsWith("10.") ? 7 : 2, name));
    }
    assertThat(Pki.loadAuthority(dir.resolve("ca.crt"), dir.resolve("ca.key")).certificate()).isEqualTo(ca);
  }

  @Test
  void existingFilesAreKeptAndOnlyWhatIsMissingIsIssuedBySameCa() throws Exception {
    String members = "node1=127.0.0.1:9849,node2=127.0.0.1:9859";
    assertThat(run("--dir", dir.toString(), "--members", members)).isZero();
    String ca = Files.readString(dir.resolve("ca.crt"));
    String node1 = Files.readString(dir.resolve("node1.crt"));
    String node2 = Files.readString(dir.resolve("node2.crt"));

    assertThat(run("--dir=" + dir, "--members=" + members)).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("kept  " + dir.resolve("node1.crt"));
    assertThat(Files.readString(dir.resolve("ca.crt"))).isEqualTo(ca);
    assertThat(Files.readString(dir.resolve("node1.crt"))).isEqualTo(node1);

    // a member's certificate rotated: its two files deleted, the command run again
    Files.delete(dir.resolve("node2.crt"));
    Files.delete(dir.resolve("node2.key"));
    assertThat(run("--dir", dir.toString(), "--members", members + ",node3=127.0.0.1:9869")).isZero();
    assertThat(Files.readString(dir.resolve("node2.crt"))).isNotEqualTo(node2);
    Pki.readCertificate(dir.resolve("node2.crt")).verify(Pki.readCertificate(dir.resolve("ca.crt")).getPublicKey());
    assertThat(dir.resolve("node3.key")).exists();
    assertThat(Files.readString(dir.resolve("node1.crt"))).isEqualTo(node1);
  }

  @Test
  void badArgumentsAndInconsistentFilesAreRefusedNamingWhatIsWrong() throws Exception {
    assertThat(run("--dir", dir.toString(), "--members", "127.0.0.1:9849,127.0.0.1:9859")).isEqualTo(2);
    assertThat(err()).contains("--members: two entries would share the files 127.0.0.1.crt and 127.0.0.1.key "
        + "(expected: a name for each, e.g. node1=127.0.0.1:9859)");
    assertThat(run("--dir", dir.toString())).isEqualTo(2);
    assertThat(err()).contains("--members: missing");
    assertThat(run("--dir", dir.toString(), "--members", "roster1")).isEqualTo(2);
    assertThat(err()).contains("--members: \"roster1\" (expected: host:peerPort or name=host:peerPort");

    assertThat(run("--dir", dir.toString(), "--members", "roster1:9849")).isZero();
    Files.delete(dir.resolve("roster1.key"));
    assertThat(run("--dir", dir.toString(), "--members", "roster1:9849")).isEqualTo(2);
    assertThat(err()).contains(dir.resolve("roster1.key") + " is missing beside " + dir.resolve("roster1.crt"));

    // a member certificate from another CA: the CA's files were replaced
    Pki.newAuthority("another").issue("roster1", List.of("roster1"))
        .writePem(dir.resolve("roster1.crt"), dir.resolve("roster1.key"));
    assertThat(run("--dir", dir.toString(), "--members", "roster1:9849")).isEqualTo(2);
    assertThat(err()).contains(dir.resolve("roster1.crt") + " is not signed by the CA in " + dir.resolve("ca.crt"));
  }
}
