package io.roster.client.internal;

import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.util.CertificateUtils;
import io.roster.client.RosterException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The client's TLS settings, read and checked once when the client is built: the CA
 * certificates it trusts and, for mutual TLS, its own certificate and key. The channels get them
 * as gRPC {@link ChannelCredentials}; gRPC checks the server's chain against the CAs and that the
 * server's certificate names the host the client dialled (hostname verification, always on).
 * Public only so that the builder can read the files into {@link ClientOptions}; not part of
 * the API.
 */
public final class TlsSettings {

  private final byte[] trustedCas;
  private final byte @Nullable [] certificate;
  private final byte @Nullable [] key;

  private TlsSettings(byte[] trustedCas, byte @Nullable [] certificate, byte @Nullable [] key) {
    this.trustedCas = trustedCas;
    this.certificate = certificate;
    this.key = key;
  }

  /**
   * Reads and checks the files.
   *
   * @param trustPem CA certificates (PEM) a server's certificate must chain to
   * @param certPem this client's certificate chain (PEM), or null for none
   * @param keyPem its unencrypted PKCS#8 private key (PEM), or null for none
   * @throws RosterException INVALID_ARGUMENT naming the setting, the file and the problem
   */
  public static TlsSettings load(Path trustPem, @Nullable Path certPem, @Nullable Path keyPem) {
    byte[] cas = read("tlsTrust", trustPem);
    certificates("tlsTrust", trustPem, cas, "CA certificates");
    if (certPem == null || keyPem == null) {
      return new TlsSettings(cas, null, null);
    }
    byte[] cert = read("tlsClientCertificate", certPem);
    X509Certificate[] chain = certificates("tlsClientCertificate", certPem, cert, "the client's certificate first");
    byte[] key = read("tlsClientCertificate", keyPem);
    PrivateKey privateKey;
    try {
      if (!new String(key, StandardCharsets.US_ASCII).contains("-----BEGIN PRIVATE KEY-----")) {
        throw new IllegalArgumentException("no -----BEGIN PRIVATE KEY----- block");
      }
      privateKey = CertificateUtils.getPrivateKey(new ByteArrayInputStream(key));
    } catch (IOException | GeneralSecurityException | RuntimeException e) {
      throw invalid("tlsClientCertificate", keyPem, "not an unencrypted PKCS#8 private key: " + e.getMessage(),
          "-----BEGIN PRIVATE KEY-----; openssl pkcs8 -topk8 -nocrypt converts other forms", e);
    }
    if (!matches(privateKey, chain[0])) {
      throw invalid("tlsClientCertificate", keyPem, "not the private key of the first certificate in " + certPem,
          "that certificate's key", null);
    }
    return new TlsSettings(cas, cert, key);
  }

  /** Whether this client presents a certificate. */
  boolean mutual() {
    return certificate != null;
  }

  /** The credentials of every channel of the client. */
  ChannelCredentials credentials() {
    try {
      TlsChannelCredentials.Builder builder = TlsChannelCredentials.newBuilder()
          .trustManager(new ByteArrayInputStream(trustedCas));
      if (certificate != null && key != null) {
        builder.keyManager(new ByteArrayInputStream(certificate), new ByteArrayInputStream(key));
      }
      return builder.build();
    } catch (IOException e) {
      throw new IllegalStateException("reading from memory failed", e);
    }
  }

  /** Whether {@code key} signs what the certificate's public key verifies. */
  private static boolean matches(PrivateKey key, X509Certificate certificate) {
    String algorithm = switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      default -> key.getAlgorithm();
    };
    try {
      byte[] probe = "roster".getBytes(StandardCharsets.US_ASCII);
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(certificate.getPublicKey());
      verifier.update(probe);
      return verifier.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static byte[] read(String field, Path path) {
    Objects.requireNonNull(path, field);
    try {
      return Files.readAllBytes(path);
    } catch (NoSuchFileException e) {
      throw invalid(field, path, "no such file", "a PEM file", e);
    } catch (IOException e) {
      throw invalid(field, path, "cannot be read: " + e, "a PEM file", e);
    }
  }

  private static X509Certificate[] certificates(String field, Path path, byte[] pem, String expected) {
    X509Certificate[] certs;
    try {
      certs = CertificateUtils.getX509Certificates(new ByteArrayInputStream(pem));
    } catch (GeneralSecurityException | RuntimeException e) {
      throw invalid(field, path, "not PEM certificates: " + e.getMessage(), expected, e);
    }
    if (certs.length == 0) {
      throw invalid(field, path, "holds no certificate", "-----BEGIN CERTIFICATE----- blocks, " + expected, null);
    }
    return certs;
  }

  private static RosterException invalid(String field, Path path, String problem, String expected,
      @Nullable Throwable cause) {
    return new RosterException(RosterException.Code.INVALID_ARGUMENT,
        field + ": " + path + ": " + problem + " (expected: " + expected + ")", field, cause);
  }
}
