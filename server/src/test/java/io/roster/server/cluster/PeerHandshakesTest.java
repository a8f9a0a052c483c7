package io.roster.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.roster.server.testing.LogLines;
import io.roster.server.testing.TestPki;
import io.roster.server.time.FakeScheduler;
import io.roster.server.tls.Pki;
import java.nio.ByteBuffer;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;
import javax.net.ssl.X509ExtendedKeyManager;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The peer port's refused handshakes are said, not silent: real TLS handshakes between two JDK
 * engines in memory, the accepting end set up as a member's (its key and trust managers wrapped by
 * {@link PeerHandshakes}, a client certificate required), the dialling end as a member, an
 * intruder without a certificate, or a member of another cluster.
 */
class PeerHandshakesTest {

  private static final String CA_FILE = "/etc/roster/peer-ca.crt";

  private final FakeScheduler time = new FakeScheduler();
  private final PeerHandshakes handshakes = new PeerHandshakes(time, CA_FILE);
  private final Pki.Authority cluster = Pki.newAuthority("roster-cluster-ca");
  private final Pki.Authority other = Pki.newAuthority("another-ca");
  private final LogLines warnings = new LogLines(PeerHandshakes.class, Level.WARN);

  @AfterEach
  void close() {
    warnings.close();
  }

  @Test
  void aMemberIsTakenWithoutAWord() throws Exception {
    assertThat(handshake(member(cluster, "n2", null), acceptingMember())).isNull();

    time.advance(PeerHandshakes.NO_CERTIFICATE_AFTER.plusSeconds(1));
    handshakes.cleanUp();
    assertThat(warnings.lines()).isEmpty();
    assertThat(handshakes.watched()).isZero();
  }

  @Test
  void aConnectionWithoutAClientCertificateIsReportedOnceItHadTimeToPresentOne() throws Exception {
    assertThat(handshake(engine(null, cluster, true), acceptingMember())).isNotNull();
    handshakes.cleanUp();
    assertThat(warnings.lines()).as("not before it had time").isEmpty();

    time.advance(PeerHandshakes.NO_CERTIFICATE_AFTER.plusSeconds(1));
    handshakes.cleanUp();

    assertThat(warnings.lines()).containsExactly("Refused a connection to the peer port: it presented no client "
        + "certificate (only members, with a certificate of the cluster's CA in " + CA_FILE + ", may connect; is a "
        + "process other than a member dialling it?)");
  }

  @Test
  void aCertificateOfAnotherCaIsNamedWithItsIssuerAtTheEndThatAccepts() throws Exception {
    assertThat(handshake(member(other, "intruder", cluster), acceptingMember())).isNotNull();

    assertThat(warnings.lines()).singleElement().asString()
        .startsWith("Refused a connection to the peer port: the certificate CN=intruder issued by CN=another-ca is not "
            + "signed by the cluster's CA in " + CA_FILE + " (--peer-tls-ca): ");
    time.advance(PeerHandshakes.NO_CERTIFICATE_AFTER.plusSeconds(1));
    handshakes.cleanUp();
    assertThat(warnings.lines()).as("reported once, as a bad certificate").hasSize(1);
  }

  @Test
  void aPeerWithACertificateOfAnotherCaIsNamedWithItsAddressAtTheEndThatDials() throws Exception {
    SSLEngine dialling = engine(handshakes.keys(keys(cluster.issue("n1", List.of("127.0.0.1")))),
        cluster, true, "127.0.0.3", 9869);
    SSLEngine stranger = engine(keys(other.issue("n3", List.of("127.0.0.3"))), other, false, null, -1);
    stranger.setNeedClientAuth(true);

    assertThat(handshake(dialling, stranger)).isNotNull();

    assertThat(warnings.lines()).singleElement().asString().startsWith("Refused the peer at 127.0.0.3:9869: the "
        + "certificate CN=n3 issued by CN=another-ca is not signed by the cluster's CA in " + CA_FILE);
  }

  /** A member's accepting end: its certificate from the cluster's CA, wrapped, a client certificate required. */
  private SSLEngine acceptingMember() throws Exception {
    SSLEngine e = engine(handshakes.keys(keys(cluster.issue("n1", List.of("127.0.0.1")))), cluster, false, null, -1);
    e.setNeedClientAuth(true);
    return e;
  }

  /**
   * A dialling end with a certificate of {@code issuer} that trusts {@code trusts} (its own CA when
   * null); it presents its certificate whichever CAs the other end asks for.
   */
  private SSLEngine member(Pki.Authority issuer, String name, Pki.@Nullable Authority trusts) throws Exception {
    X509ExtendedKeyManager keys = keys(issuer.issue(name, List.of("127.0.0.2")));
    X509ExtendedKeyManager anyIssuer = new X509ExtendedKeyManager() {
      @Override
      public String chooseEngineClientAlias(String[] keyType, java.security.Principal[] issuers, SSLEngine engine) {
        return "k";
      }

      @Override
      public String[] getClientAliases(String keyType, java.security.Principal[] issuers) {
        return new String[] {"k"};
      }

      @Override
      public String chooseClientAlias(String[] keyType, java.security.Principal[] issuers, java.net.Socket socket) {
        return "k";
      }

      @Override
      public String[] getServerAliases(String keyType, java.security.Principal[] issuers) {
        return keys.getServerAliases(keyType, issuers);
      }

      @Override
      public String chooseServerAlias(String keyType, java.security.Principal[] issuers, java.net.Socket socket) {
        return keys.chooseServerAlias(keyType, issuers, socket);
      }

      @Override
      public X509Certificate[] getCertificateChain(String alias) {
        return keys.getCertificateChain(alias);
      }

      @Override
      public java.security.PrivateKey getPrivateKey(String alias) {
        return keys.getPrivateKey(alias);
      }
    };
    return engine(anyIssuer, trusts == null ? issuer : trusts, true);
  }

  private SSLEngine engine(@Nullable X509ExtendedKeyManager keys, Pki.Authority trusted, boolean client)
      throws Exception {
    return engine(keys, trusted, client, "127.0.0.1", 9849);
  }

  private SSLEngine engine(@Nullable X509ExtendedKeyManager keys, Pki.Authority trusted, boolean client,
      @Nullable String host, int port) throws Exception {
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(keys == null ? null : new KeyManager[] {keys},
        new javax.net.ssl.TrustManager[] {handshakes.trust(TestPki.trusting(trusted.certificate()))}, null);
    SSLEngine e = host == null ? ctx.createSSLEngine() : ctx.createSSLEngine(host, port);
    e.setUseClientMode(client);
    return e;
  }

  private static X509ExtendedKeyManager keys(Pki.Issued issued) {
    return TestPki.presenting(issued.privateKey(), issued.certificate());
  }

  /** Runs a handshake between the two engines in memory; the first failure, or null when it succeeded. */
  private static @Nullable SSLException handshake(SSLEngine client, SSLEngine server) {
    ByteBuffer toServer = ByteBuffer.allocate(1 << 17);
    ByteBuffer toClient = ByteBuffer.allocate(1 << 17);
    ByteBuffer app = ByteBuffer.allocate(1 << 17);
    ByteBuffer empty = ByteBuffer.allocate(0);
    try {
      client.beginHandshake();
      server.beginHandshake();
      for (int round = 0; round < 100; round++) {
        step(client, empty, toServer, toClient, app);
        step(server, empty, toClient, toServer, app);
        if (client.getHandshakeStatus() == HandshakeStatus.NOT_HANDSHAKING
            && server.getHandshakeStatus() == HandshakeStatus.NOT_HANDSHAKING) {
          return null;
        }
        if (client.isOutboundDone() && server.isOutboundDone()) {
          return new SSLException("closed");
        }
      }
      throw new AssertionError("the handshake went on for 100 rounds");
    } catch (SSLException e) {
      return e;
    }
  }

  /** One turn of {@code e}: wraps what it has to send into {@code out}, unwraps what {@code in} holds. */
  private static void step(SSLEngine e, ByteBuffer empty, ByteBuffer out, ByteBuffer in, ByteBuffer app)
      throws SSLException {
    for (int i = 0; i < 10; i++) {
      HandshakeStatus s = e.getHandshakeStatus();
      if (s == HandshakeStatus.NEED_TASK) {
        Runnable task;
        while ((task = e.getDelegatedTask()) != null) {
          task.run();
        }
      } else if (s == HandshakeStatus.NEED_WRAP) {
        e.wrap(empty, out);
      } else if (s == HandshakeStatus.NEED_UNWRAP || s == HandshakeStatus.NEED_UNWRAP_AGAIN) {
        in.flip();
        if (!in.hasRemaining() && s == HandshakeStatus.NEED_UNWRAP) {
          in.compact();
          return;
        }
        e.unwrap(in, app);
        in.compact();
      } else {
        return;
      }
    }
  }
}
