package io.roster.server.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * {@link ServerTls} on files: what a bad file at start says, and what a reload takes, keeps and
 * logs (each read is {@link ServerTls#reload()}, as the periodic reload calls it).
 */
class ServerTlsTest {

  @TempDir
  Path dir;

  private final Pki.Authority ca = Pki.newAuthority("roster-test-ca");
  private Path cert;
  private Path key;
  private Path clientCa;
  private final ListAppender<ILoggingEvent> seen = new ListAppender<>();
  private Logger logger;
  private Level level;

  @BeforeEach
  void files() throws Exception {
    cert = dir.resolve("server.crt");
    key = dir.resolve("server.key");
    clientCa = dir.resolve("clients.crt");
    ca.issue("server", List.of("127.0.0.1", "localhost")).writePem(cert, key);
    ca.writeCertificatePem(clientCa);
    logger = ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(ServerTls.class);
    seen.start();
    level = logger.getLevel();
    logger.setLevel(Level.INFO);
    logger.addAppender(seen);
  }

  @AfterEach
  void detach() {
    logger.detachAppender(seen);
    logger.setLevel(level);
  }

  private List<String> lines(Level level) {
    return seen.list.stream().filter(e -> e.getLevel() == level).map(ILoggingEvent::getFormattedMessage).toList();
  }

  private static BigInteger servedSerial(ServerTls tls) {
    String alias = tls.keyManager().chooseServerAlias("EC", null, null);
    return tls.keyManager().getCertificateChain(alias)[0].getSerialNumber();
  }

  @Test
  void aMissingFileAtStartNamesTheOptionThePathAndTheProblem() {
    Path missing = dir.resolve("nope.crt");
    assertThatThrownBy(() -> ServerTls.load(new TlsFiles(missing, key, null)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--tls-cert")
        .hasMessageContaining(missing.toString())
        .hasMessageContaining("no such file");
    assertThatThrownBy(() -> ServerTls.load(new TlsFiles(cert, key, missing)))
        .hasMessageContaining("--tls-client-ca")
        .hasMessageContaining(missing.toString())
        .hasMessageContaining("no such file");
  }

  @Test
  void aFileThatIsNotWhatItsOptionPromisesIsRefusedAtStart() throws Exception {
    Path garbage = dir.resolve("garbage.pem");
    Files.writeString(garbage, "not a certificate\n");
    assertThatThrownBy(() -> ServerTls.load(new TlsFiles(garbage, key, null)))
        .hasMessageContaining("--tls-cert " + garbage)
        .hasMessageContaining("no PEM certificate");
    assertThatThrownBy(() -> ServerTls.load(new TlsFiles(cert, garbage, null)))
        .hasMessageContaining("--tls-key " + garbage)
        .hasMessageContaining("no PEM private key");
    // A key of another certificate.
    Path otherCert = dir.resolve("other.crt");
    Path otherKey = dir.resolve("other.key");
    ca.issue("other", List.of("localhost")).writePem(otherCert, otherKey);
    assertThatThrownBy(() -> ServerTls.load(new TlsFiles(cert, otherKey, null)))
        .hasMessageContaining("--tls-key " + otherKey)
        .hasMessageContaining("not the private key of the first certificate in --tls-cert " + cert);
  }

  @Test
  void changedFilesReplaceTheMaterialAndUnchangedOnesAreLeftAlone() throws Exception {
    try (ServerTls tls = ServerTls.load(new TlsFiles(cert, key, clientCa))) {
      BigInteger first = servedSerial(tls);
      assertThat(tls.reload()).as("nothing changed").isFalse();

      Pki.Issued next = ca.issue("server", List.of("127.0.0.1"));
      next.writePem(cert, key);
      assertThat(tls.reload()).isTrue();
      assertThat(servedSerial(tls)).isEqualTo(next.certificate().getSerialNumber()).isNotEqualTo(first);
      assertThat(lines(Level.INFO)).singleElement().asString().contains("new material");
      assertThat(lines(Level.WARN)).isEmpty();
    }
  }

  @Test
  void aBadFileAtReloadKeepsTheOldMaterialAndWarnsOnce() throws Exception {
    try (ServerTls tls = ServerTls.load(new TlsFiles(cert, key, null))) {
      BigInteger served = servedSerial(tls);
      Files.writeString(key, "-----BEGIN PRIVATE KEY-----\nbroken\n-----END PRIVATE KEY-----\n");
      for (int read = 0; read < 5; read++) {
        assertThat(tls.reload()).isFalse();
      }
      assertThat(servedSerial(tls)).isEqualTo(served);
      assertThat(lines(Level.WARN)).singleElement().asString()
          .contains("--tls-key " + key).contains("keeping the certificate");

      // Another bad state is another warning, once; good files are taken again.
      Files.delete(key);
      for (int read = 0; read < 5; read++) {
        tls.reload();
      }
      assertThat(lines(Level.WARN)).hasSize(2).last().asString().contains("no such file");
      Pki.Issued next = ca.issue("server", List.of("127.0.0.1"));
      next.writePem(cert, key);
      assertThat(tls.reload()).isTrue();
      assertThat(servedSerial(tls)).isEqualTo(next.certificate().getSerialNumber());
    }
  }

  @Test
  void aRotationWrittenOneFileAtATimeDoesNotWarnInBetween() throws Exception {
    try (ServerTls tls = ServerTls.load(new TlsFiles(cert, key, null))) {
      Pki.Issued next = ca.issue("server", List.of("127.0.0.1"));
      Path stagedCert = dir.resolve("staged.crt");
      Path stagedKey = dir.resolve("staged.key");
      next.writePem(stagedCert, stagedKey);
      // The certificate is in place, its key not yet: one read sees a key of another certificate.
      Files.copy(stagedCert, cert, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      assertThat(tls.reload()).isFalse();
      Files.copy(stagedKey, key, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      assertThat(tls.reload()).isTrue();
      assertThat(lines(Level.WARN)).isEmpty();
    }
  }
}
