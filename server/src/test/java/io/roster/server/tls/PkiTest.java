package io.roster.server.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The throwaway CA: what it issues, the PEM files it writes and reads, and a TLS handshake. */
class PkiTest {

  @TempDir Path dir;

  @Test
  void anIssuedCertificateIsSignedByTheAuthorityNamesItsAddressesAndServesBothEnds()
      throws Exception {
    Pki.Authority ca = Pki.newAuthority("roster-cluster-ca");
    Pki.Issued node = ca.issue("node1", List.of("127.0.0.1", "localhost", "::1"));

    X509Certificate cert = node.certificate();
    cert.verify(ca.certificate().getPublicKey());
    cert.checkValidity();
    assertThat(cert.getSubjectX500Principal().getName()).isEqualTo("CN=node1");
    assertThat(cert.getIssuerX500Principal()).isEqualTo(ca.certificate().getSubjectX500Principal());
    assertThat(cert.getBasicConstraints()).isEqualTo(-1); // not a CA
    assertThat(cert.getExtendedKeyUsage())
        .containsExactlyInAnyOrder("1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"); // server, client
    // type 7 = IP address, 2 = DNS name
    assertThat(cert.getSubjectAlternativeNames())
        .containsExactlyInAnyOrder(
            List.of(7, "127.0.0.1"), List.of(2, "localhost"), List.of(7, "0:0:0:0:0:0:0:1"));
    assertThat(Pki.keyMatches(cert, node.privateKey())).isTrue();
    assertThat(Pki.keyMatches(cert, ca.privateKey())).isFalse();

    X509Certificate caCert = ca.certificate();
    caCert.verify(caCert.getPublicKey()); // self-signed
    assertThat(caCert.getBasicConstraints()).isGreaterThanOrEqualTo(0);
    assertThat(caCert.getSubjectX500Principal().getName()).isEqualTo("CN=roster-cluster-ca");
  }

  @Test
  void pemFilesRoundTripAndTheKeyFilesAreTheOwnersOnly() throws Exception {
    Pki.Authority ca = Pki.newAuthority("roster-cluster-ca");
    Pki.Issued node = ca.issue("node1", List.of("127.0.0.1"));
    ca.writePem(dir.resolve("ca.crt"), dir.resolve("ca.key"));
    node.writePem(dir.resolve("pki/node1.crt"), dir.resolve("pki/node1.key"));

    assertThat(Files.readString(dir.resolve("pki/node1.crt")))
        .startsWith("-----BEGIN CERTIFICATE-----");
    assertThat(Files.readString(dir.resolve("pki/node1.key")))
        .startsWith("-----BEGIN PRIVATE KEY-----");
    assertThat(Pki.readCertificate(dir.resolve("pki/node1.crt"))).isEqualTo(node.certificate());
    assertThat(Pki.readPrivateKey(dir.resolve("pki/node1.key")).getEncoded())
        .isEqualTo(node.privateKey().getEncoded());
    if (FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("ca.key"))))
          .isEqualTo("rw-------");
      assertThat(
              PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("pki/node1.key"))))
          .isEqualTo("rw-------");
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("ca.crt"))))
          .isEqualTo("rw-r--r--");
    }
    try (var files = Files.list(dir.resolve("pki"))) {
      assertThat(files.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("node1.crt", "node1.key");
    }

    Pki.Authority loaded = Pki.loadAuthority(dir.resolve("ca.crt"), dir.resolve("ca.key"));
    assertThat(loaded.certificate()).isEqualTo(ca.certificate());
    // what the loaded authority issues, the original's certificate verifies
    loaded.issue("node2", List.of("localhost")).certificate().verify(ca.certificate().getPublicKey());

    // writing again replaces the files
    Pki.Issued renewed = ca.issue("node1", List.of("127.0.0.1"));
    renewed.writePem(dir.resolve("pki/node1.crt"), dir.resolve("pki/node1.key"));
    assertThat(Pki.readCertificate(dir.resolve("pki/node1.crt"))).isEqualTo(renewed.certificate());
  }

  @Test
  void badFilesAreRefusedNamingThePathAndWhatIsWrong() throws Exception {
    Pki.Authority ca = Pki.newAuthority("ca");
    Pki.Issued node = ca.issue("node1", List.of("127.0.0.1"));
    node.writePem(dir.resolve("node.crt"), dir.resolve("node.key"));
    Path missing = dir.resolve("missing.pem");
    Path garbage = dir.resolve("garbage.pem");
    Files.writeString(garbage, "not a certificate\n");
    Path truncated = dir.resolve("truncated.pem");
    Files.writeString(truncated, "-----BEGIN CERTIFICATE-----\nMIIB!!!\n-----END CERTIFICATE-----\n");

    assertThatThrownBy(() -> Pki.readCertificate(missing))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(missing.toString())
        .hasMessageContaining("no such file");
    assertThatThrownBy(() -> Pki.readCertificate(garbage))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(garbage.toString())
        .hasMessageContaining("no PEM certificate");
    assertThatThrownBy(() -> Pki.readCertificate(dir.resolve("node.key")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no PEM certificate");
    assertThatThrownBy(() -> Pki.readCertificate(truncated))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(truncated.toString());
    assertThatThrownBy(() -> Pki.readPrivateKey(dir.resolve("node.crt")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no PEM private key");
    // a member's certificate is no authority, and a key must be the certificate's
    assertThatThrownBy(() -> Pki.loadAuthority(dir.resolve("node.crt"), dir.resolve("node.key")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a CA certificate");
    ca.writeCertificatePem(dir.resolve("ca.crt"));
    assertThatThrownBy(() -> Pki.loadAuthority(dir.resolve("ca.crt"), dir.resolve("node.key")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("is not the private key of the certificate");
  }

  @Test
  void twoCertificatesOfOneAuthorityCompleteAMutualTlsHandshakeAndAnotherAuthorityIsRefused()
      throws Exception {
    Pki.Authority ca = Pki.newAuthority("roster-cluster-ca");
    Pki.Issued server = ca.issue("node1", List.of("127.0.0.1"));
    Pki.Issued client = ca.issue("node2", List.of("127.0.0.1"));
    Pki.Issued stranger = Pki.newAuthority("another-ca").issue("node3", List.of("127.0.0.1"));

    SSLContext serverContext = context(server.certificate(), server.privateKey(), ca.certificate());
    try (SSLServerSocket listener =
        (SSLServerSocket)
            serverContext
                .getServerSocketFactory()
                .createServerSocket(0, 10, InetAddress.getLoopbackAddress())) {
      listener.setNeedClientAuth(true);
      CompletableFuture<Void> serving =
          CompletableFuture.runAsync(
              () -> {
                for (int i = 0; i < 2; i++) {
                  try (SSLSocket s = (SSLSocket) listener.accept()) {
                    s.setSoTimeout(10_000);
                    s.getOutputStream().write('k');
                    s.getOutputStream().flush();
                  } catch (IOException e) {
                    // the stranger's handshake fails here; the next accept goes on
                  }
                }
              });

      assertThat(roundTrip(client, ca, listener.getLocalPort())).isEqualTo('k');
      assertThatThrownBy(() -> roundTrip(stranger, ca, listener.getLocalPort()))
          .isInstanceOfAny(SSLHandshakeException.class, IOException.class);
      serving.get(30, TimeUnit.SECONDS);
    }
  }

  private static int roundTrip(Pki.Issued who, Pki.Authority trusted, int port) throws Exception {
    SSLContext context = context(who.certificate(), who.privateKey(), trusted.certificate());
    try (SSLSocket socket =
        (SSLSocket)
            context.getSocketFactory().createSocket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      SSLParameters parameters = socket.getSSLParameters();
      parameters.setEndpointIdentificationAlgorithm("HTTPS"); // the server's IP SAN is checked
      socket.setSSLParameters(parameters);
      OutputStream out = socket.getOutputStream();
      out.write("hello".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      int read = in.read();
      if (read < 0) {
        throw new IOException("closed by the server");
      }
      return read;
    }
  }

  private static SSLContext context(X509Certificate cert, PrivateKey key, X509Certificate ca) {
    return io.roster.server.testing.TestPki.context(ca, cert, key);
  }
}
