package io.roster.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.server.config.ClusterSettings;
import io.roster.server.config.ServerConfig;
import io.roster.server.tls.Pki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a member's peer TLS files must hold, and the error that names the option, path and problem. */
class PeerTlsTest {

  @TempDir Path dir;
  Pki.Authority ca;
  Path caFile;
  Path cert;
  Path key;

  @BeforeEach
  void pki() throws Exception {
    ca = Pki.newAuthority("roster-cluster-ca");
    caFile = dir.resolve("ca.crt");
    ca.writeCertificatePem(caFile);
    cert = dir.resolve("node1.crt");
    key = dir.resolve("node1.key");
    ca.issue("node1", List.of("127.0.0.1")).writePem(cert, key);
  }

  private static ClusterSettings config(Path cert, Path key, Path ca) {
    return ServerConfig.builder().members(List.of("127.0.0.1:9849")).peerTlsCert(cert).peerTlsKey(key).peerTlsCa(ca)
        .build().cluster();
  }

  @Test
  void goodFilesGiveRatisMutualTlsAndOffGivesNone() {
    GrpcTlsConfig tls = PeerTls.load(config(cert, key, caFile), null);
    assertThat(tls).isNotNull();
    assertThat(tls.getMtlsEnabled()).isTrue();
    assertThat(PeerTls.load(ServerConfig.builder().members(List.of("127.0.0.1:9849")).peerTls(false).build().cluster(), null)).isNull();
  }

  @Test
  void aMissingOrUnreadableFileNamesItsOptionAndPath() throws Exception {
    Path missing = dir.resolve("nope.crt");
    assertThatThrownBy(() -> PeerTls.load(config(missing, key, caFile), null))
        .hasMessage("--peer-tls-cert: cannot read " + missing + ": no such file");
    Path garbage = dir.resolve("garbage.pem");
    Files.writeString(garbage, "hello\n");
    assertThatThrownBy(() -> PeerTls.load(config(cert, key, garbage), null))
        .hasMessage("--peer-tls-ca: " + garbage + " holds no PEM certificate (BEGIN CERTIFICATE)");
    assertThatThrownBy(() -> PeerTls.load(config(cert, cert, caFile), null))
        .hasMessage("--peer-tls-key: " + cert + " holds no PEM private key (BEGIN PRIVATE KEY)");
  }

  @Test
  void aKeyThatIsNotTheCertificatesIsRefused() throws Exception {
    Path otherKey = dir.resolve("other.key");
    ca.issue("node2", List.of("127.0.0.1")).writePem(dir.resolve("other.crt"), otherKey);
    assertThatThrownBy(() -> PeerTls.load(config(cert, otherKey, caFile), null))
        .hasMessageStartingWith("--peer-tls-key: " + otherKey + " is not the private key of the certificate in "
            + cert + " (--peer-tls-cert)");
  }

  @Test
  void aCertificateFromAnotherCaIsRefusedAtStartNotAtTheFirstHandshake() throws Exception {
    Path strangerCert = dir.resolve("stranger.crt");
    Path strangerKey = dir.resolve("stranger.key");
    Pki.newAuthority("another-ca").issue("node1", List.of("127.0.0.1")).writePem(strangerCert, strangerKey);
    assertThatThrownBy(() -> PeerTls.load(config(strangerCert, strangerKey, caFile), null))
        .hasMessageStartingWith("--peer-tls-cert: the certificate in " + strangerCert + " is not signed by the CA in "
            + caFile + " (--peer-tls-ca), so the other members would refuse it");
  }

  @Test
  void aCertificateNamesAHostAsATlsClientChecksIt() {
    var cert = ca.issue("n", List.of("10.0.0.1", "roster1", "*.roster.internal", "::1")).certificate();
    assertThat(PeerTls.names(cert, "10.0.0.1")).isTrue();
    assertThat(PeerTls.names(cert, "10.0.0.2")).isFalse();
    assertThat(PeerTls.names(cert, "ROSTER1")).isTrue();
    assertThat(PeerTls.names(cert, "roster2")).isFalse();
    assertThat(PeerTls.names(cert, "node1.roster.internal")).isTrue();
    assertThat(PeerTls.names(cert, "a.node1.roster.internal")).isFalse();
    assertThat(PeerTls.names(cert, "[0:0:0:0:0:0:0:1]")).isTrue();
    assertThat(PeerTls.names(cert, "127.0.0.1")).isFalse();
  }

  @Test
  void anExpiredCertificateIsRefused() throws Exception {
    Path oldCert = dir.resolve("old.crt");
    Path oldKey = dir.resolve("old.key");
    ca.issue("node1", List.of("127.0.0.1"), Duration.ofMinutes(-1)).writePem(oldCert, oldKey);
    assertThatThrownBy(() -> PeerTls.load(config(oldCert, oldKey, caFile), null))
        .hasMessageStartingWith("--peer-tls-cert: the certificate CN=node1 in " + oldCert + " expired on ");
  }
}
