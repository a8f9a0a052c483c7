package io.roster.server.cluster;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.roster.server.time.Scheduler;
import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says why the peer port refused a TLS handshake, which Ratis's transport does without a word, so
 * that a member with a certificate of another CA is not just silently "down":
 *
 * <ul>
 *   <li>a certificate the cluster's CA did not sign, at either end: a WARN naming the certificate,
 *       its issuer and, where TLS knows it (the end that dials), the peer's address;
 *   <li>a connection that presents no client certificate, at the end that accepts: TLS refuses
 *       it before any of this code sees a certificate, so a handshake this member began (its key
 *       manager chose its certificate) that has no verified client certificate {@link
 *       #NO_CERTIFICATE_AFTER} later is reported then, by {@link #cleanUp} (the address is not
 *       known to TLS at that end).
 * </ul>
 *
 * <p>It wraps the trust manager and the key manager given to Ratis ({@link PeerTls}); it decides
 * nothing: every refusal is the wrapped trust manager's. The WARNs are rate-limited by the log's
 * {@code RepeatedWarningFilter}. Thread-safe.
 */
final class PeerHandshakes {

  /** How long a handshake may go without a verified client certificate before it is reported. */
  static final Duration NO_CERTIFICATE_AFTER = Duration.ofSeconds(10);

  private static final Logger log = LoggerFactory.getLogger(PeerHandshakes.class);
  private static final int MAX_WATCHED = 10_000;

  private final String caFile;
  /** Handshakes accepted here whose client certificate has not been checked yet (weak keys: by identity). */
  private final Cache<SSLEngine, Boolean> accepting;

  /**
   * @param time the clock handshakes are timed on
   * @param caFile the CA's file, for the WARNs ({@code --peer-tls-ca})
   */
  PeerHandshakes(Scheduler time, String caFile) {
    this.caFile = caFile;
    this.accepting = Caffeine.newBuilder().weakKeys().maximumSize(MAX_WATCHED).expireAfterWrite(NO_CERTIFICATE_AFTER)
        .ticker(time::nanoTime).executor(Runnable::run)
        .<SSLEngine, Boolean>removalListener((engine, v, cause) -> {
          if (engine != null && cause == RemovalCause.EXPIRED) {
            checkPresented(engine);
          }
        }).build();
  }

  /** Reports the handshakes that have gone {@link #NO_CERTIFICATE_AFTER} without a client certificate. */
  void cleanUp() {
    accepting.cleanUp();
  }

  /** Handshakes being watched (for tests). */
  long watched() {
    accepting.cleanUp();
    return accepting.estimatedSize();
  }

  private void checkPresented(SSLEngine engine) {
    try {
      engine.getSession().getPeerCertificates();
    } catch (SSLPeerUnverifiedException | RuntimeException e) {
      log.warn("Refused a connection to the peer port: it presented no client certificate (only members, with a "
          + "certificate of the cluster's CA in {}, may connect; is a process other than a member dialling it?)",
          caFile);
    }
  }

  /** {@code keys}, noting every handshake this member accepts. */
  X509ExtendedKeyManager keys(X509ExtendedKeyManager keys) {
    return new X509ExtendedKeyManager() {
      @Override
      public @Nullable String chooseEngineServerAlias(String keyType, Principal @Nullable [] issuers,
          @Nullable SSLEngine engine) {
        if (engine != null) {
          accepting.put(engine, Boolean.TRUE);
        }
        return keys.chooseEngineServerAlias(keyType, issuers, engine);
      }

      @Override
      public @Nullable String chooseEngineClientAlias(String[] keyType, Principal @Nullable [] issuers,
          @Nullable SSLEngine engine) {
        return keys.chooseEngineClientAlias(keyType, issuers, engine);
      }

      @Override
      public String @Nullable [] getClientAliases(String keyType, Principal @Nullable [] issuers) {
        return keys.getClientAliases(keyType, issuers);
      }

      @Override
      public @Nullable String chooseClientAlias(String[] keyType, Principal @Nullable [] issuers,
          @Nullable Socket socket) {
        return keys.chooseClientAlias(keyType, issuers, socket);
      }

      @Override
      public String @Nullable [] getServerAliases(String keyType, Principal @Nullable [] issuers) {
        return keys.getServerAliases(keyType, issuers);
      }

      @Override
      public @Nullable String chooseServerAlias(String keyType, Principal @Nullable [] issuers,
          @Nullable Socket socket) {
        return keys.chooseServerAlias(keyType, issuers, socket);
      }

      @Override
      public X509Certificate @Nullable [] getCertificateChain(String alias) {
        return keys.getCertificateChain(alias);
      }

      @Override
      public @Nullable PrivateKey getPrivateKey(String alias) {
        return keys.getPrivateKey(alias);
      }
    };
  }

  /** {@code trust}, saying why it refuses a peer's certificate. */
  X509ExtendedTrustManager trust(X509ExtendedTrustManager trust) {
    return new X509ExtendedTrustManager() {
      @Override
      public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
          throws CertificateException {
        accepting.invalidate(engine);
        said(ACCEPTED, chain, () -> trust.checkClientTrusted(chain, authType, engine));
      }

      @Override
      public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
          throws CertificateException {
        said("the peer at " + engine.getPeerHost() + ":" + engine.getPeerPort(), chain,
            () -> trust.checkServerTrusted(chain, authType, engine));
      }

      @Override
      public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
          throws CertificateException {
        said(ACCEPTED, chain, () -> trust.checkClientTrusted(chain, authType, socket));
      }

      @Override
      public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
          throws CertificateException {
        said("the peer at " + socket.getRemoteSocketAddress(), chain,
            () -> trust.checkServerTrusted(chain, authType, socket));
      }

      @Override
      public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        said(ACCEPTED, chain, () -> trust.checkClientTrusted(chain, authType));
      }

      @Override
      public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        said("a peer", chain, () -> trust.checkServerTrusted(chain, authType));
      }

      @Override
      public X509Certificate[] getAcceptedIssuers() {
        return trust.getAcceptedIssuers();
      }
    };
  }

  private static final String ACCEPTED = "a connection to the peer port";

  /** A trust manager's check. */
  @FunctionalInterface
  private interface Check {
    void run() throws CertificateException;
  }

  /** Runs {@code check}; when it refuses {@code chain}, says so and refuses. */
  private void said(String who, X509Certificate[] chain, Check check) throws CertificateException {
    try {
      check.run();
    } catch (CertificateException e) {
      refused(who, chain, e);
      throw e;
    }
  }

  private void refused(String who, X509Certificate[] chain, CertificateException e) {
    String cert = chain.length == 0 ? "no certificate"
        : "the certificate " + chain[0].getSubjectX500Principal() + " issued by " + chain[0].getIssuerX500Principal();
    log.warn("Refused {}: {} is not signed by the cluster's CA in {} (--peer-tls-ca): {}. Only members with a "
        + "certificate of that CA take part; is it of another cluster, or was it issued by another CA?", who, cert,
        caFile, e.getMessage());
  }
}
