package io.roster.server.testing;

import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import io.roster.server.tls.Pki;
import io.roster.server.tls.TlsFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.List;
import java.security.PrivateKey;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.jspecify.annotations.Nullable;

/**
 * TLS files for tests, made with {@link Pki} in a directory of the test's: a CA ({@code
 * ca.crt}), the server's certificate for 127.0.0.1 and localhost ({@code server.crt}, {@code
 * server.key}) and client certificates; and what a new connection to a TLS port is served.
 */
public final class TestPki {

  public final Pki.Authority ca;
  public final Path dir;
  /** The CA certificate: what clients trust, and what {@code --tls-client-ca} names. */
  public final Path caPem;
  public final Path serverCert;
  public final Path serverKey;

  private TestPki(Path dir) {
    this.dir = dir;
    this.ca = Pki.newAuthority("roster-test-ca");
    this.caPem = dir.resolve("ca.crt");
    this.serverCert = dir.resolve("server.crt");
    this.serverKey = dir.resolve("server.key");
    try {
      ca.writeCertificatePem(caPem);
      ca.issue("roster-server", List.of("127.0.0.1", "localhost")).writePem(serverCert, serverKey);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A CA and a server certificate in {@code dir}. */
  public static TestPki in(Path dir) {
    return new TestPki(dir);
  }

  /** The server's files; client certificates signed by this CA asked for when {@code mutual}. */
  public TlsFiles files(boolean mutual) {
    return new TlsFiles(serverCert, serverKey, mutual ? caPem : null);
  }

  /** The server flags for {@link #files}. */
  public List<String> flags(boolean mutual) {
    return mutual
        ? List.of("--tls-cert", serverCert.toString(), "--tls-key", serverKey.toString(), "--tls-client-ca", caPem.toString())
        : List.of("--tls-cert", serverCert.toString(), "--tls-key", serverKey.toString());
  }

  /** Writes a new server certificate for the same names over the server's files; returns it. */
  public Pki.Issued rotateServer() {
    Pki.Issued next = ca.issue("roster-server", List.of("127.0.0.1", "localhost"));
    try {
      next.writePem(serverCert, serverKey);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return next;
  }

  /** A client certificate {@code issuer} signs, written as {@code name.crt} and {@code name.key}: {cert, key}. */
  public Path[] client(Pki.Authority issuer, String name) {
    return client(issuer, name, List.of("localhost"));
  }

  /**
   * A client certificate {@code issuer} signs with {@code sans} as its subject alternative names (a
   * SPIFFE ID or other URI, a DNS name, an IP address), written as {@code name.crt} and {@code
   * name.key}: {cert, key}.
   */
  public Path[] client(Pki.Authority issuer, String name, List<String> sans) {
    Path cert = dir.resolve(name + ".crt");
    Path key = dir.resolve(name + ".key");
    try {
      issuer.issue(name, sans).writePem(cert, key);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new Path[] {cert, key};
  }

  /**
   * gRPC credentials that trust this CA, with a client certificate of it when {@code mutual}: a
   * health probe of a server started with {@link #flags}.
   */
  public ChannelCredentials credentials(boolean mutual) {
    try {
      TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder().trustManager(caPem.toFile());
      if (mutual) {
        Path[] probe = client(ca, "probe");
        b.keyManager(probe[0].toFile(), probe[1].toFile());
      }
      return b.build();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A trust manager that trusts {@code cas}. */
  public static X509ExtendedTrustManager trusting(X509Certificate... cas) {
    try {
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      for (int i = 0; i < cas.length; i++) {
        trust.setCertificateEntry("ca" + i, cas[i]);
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      return (X509ExtendedTrustManager) tmf.getTrustManagers()[0];
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A key manager that presents {@code chain} (leaf first) with {@code key}, alias {@code "k"}. */
  public static X509ExtendedKeyManager presenting(PrivateKey key, X509Certificate... chain) {
    try {
      KeyStore keys = KeyStore.getInstance("PKCS12");
      keys.load(null, null);
      keys.setKeyEntry("k", key, new char[0], chain);
      KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, new char[0]);
      return (X509ExtendedKeyManager) kmf.getKeyManagers()[0];
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A TLS context that trusts {@code ca} and presents {@code certificate} and {@code key} when given. */
  public static SSLContext context(X509Certificate ca, @Nullable X509Certificate certificate, @Nullable PrivateKey key) {
    try {
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(certificate == null || key == null ? null : new KeyManager[] {presenting(key, certificate)},
          new TrustManager[] {trusting(ca)}, null);
      return context;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The same, with the certificate and key read from PEM files. */
  public static SSLContext context(Path caPem, Path certificatePem, Path keyPem) {
    try {
      return context(Pki.readCertificate(caPem), Pki.readCertificate(certificatePem), Pki.readPrivateKey(keyPem));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The certificate that a new TLS connection to {@code host:port} is served, trusting {@code
   * trusted} (a handshake, offering HTTP/2 as gRPC clients do, and nothing else).
   */
  public static X509Certificate served(String host, int port, X509Certificate trusted) {
    try {
      SSLContext context = context(trusted, null, null);
      try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(host, port)) {
        SSLParameters parameters = socket.getSSLParameters();
        parameters.setApplicationProtocols(new String[] {"h2"});
        socket.setSSLParameters(parameters);
        socket.startHandshake();
        return (X509Certificate) socket.getSession().getPeerCertificates()[0];
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
