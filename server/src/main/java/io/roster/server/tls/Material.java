package io.roster.server.tls;

import io.grpc.util.CertificateUtils;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.HexFormat;
import org.jspecify.annotations.Nullable;

/**
 * One reading of the TLS files: their bytes (to tell whether they changed since) and, once
 * parsed, the certificate chain, its private key and the client CAs. Parsing checks what a
 * handshake would otherwise find out too late: that each file holds what its option promises and
 * that the key belongs to the chain's first certificate.
 */
final class Material {

  /** Whether {@code --tls-cert}, {@code --tls-key} or {@code --tls-client-ca} is wrong, and how. */
  static final class BadFile extends Exception {
    private static final long serialVersionUID = 1L;

    BadFile(String option, Path path, String problem, @Nullable Throwable cause) {
      super(option + " " + path + ": " + problem, cause);
    }
  }

  /** The files' contents at one moment, or why one could not be read. */
  static final class Reading {
    final String fingerprint;
    private final byte @Nullable [] cert;
    private final byte @Nullable [] key;
    private final byte @Nullable [] clientCa;
    private final @Nullable BadFile unreadable;

    private Reading(byte @Nullable [] cert, byte @Nullable [] key, byte @Nullable [] clientCa,
        @Nullable BadFile unreadable) {
      this.cert = cert;
      this.key = key;
      this.clientCa = clientCa;
      this.unreadable = unreadable;
      this.fingerprint = unreadable != null ? "unreadable: " + unreadable.getMessage() : digest(cert, key, clientCa);
    }

    /** Parses what was read: the material, or the first problem found, naming its option and path. */
    Material parse(TlsFiles files) throws BadFile {
      if (unreadable != null) {
        throw unreadable;
      }
      byte[] certBytes = java.util.Objects.requireNonNull(cert, "read");
      byte[] keyBytes = java.util.Objects.requireNonNull(key, "read");
      X509Certificate[] chain = certificates(TlsFiles.CERT_OPTION, files.cert(), certBytes,
          "the server's certificate first, then its intermediates");
      PrivateKey privateKey = privateKey(files.key(), keyBytes);
      if (!belongs(privateKey, chain[0].getPublicKey())) {
        throw new BadFile(TlsFiles.KEY_OPTION, files.key(), "not the private key of the first certificate in "
            + TlsFiles.CERT_OPTION + " " + files.cert() + " (" + chain[0].getSubjectX500Principal().getName()
            + "; expected: that certificate's key)", null);
      }
      X509Certificate[] cas = null;
      Path caPath = files.clientCa();
      if (caPath != null) {
        cas = certificates(TlsFiles.CLIENT_CA_OPTION, caPath, java.util.Objects.requireNonNull(clientCa, "read"),
            "the CA certificates that sign client certificates");
      }
      return new Material(fingerprint, chain, privateKey, cas);
    }
  }

  final String fingerprint;
  final X509Certificate[] chain;
  final PrivateKey key;
  final X509Certificate @Nullable [] clientCas;

  private Material(String fingerprint, X509Certificate[] chain, PrivateKey key, X509Certificate @Nullable [] clientCas) {
    this.fingerprint = fingerprint;
    this.chain = chain;
    this.key = key;
    this.clientCas = clientCas;
  }

  /** The server's certificate in a few words, for the log. */
  String describe() {
    X509Certificate leaf = chain[0];
    return "certificate " + leaf.getSubjectX500Principal().getName() + " (serial " + leaf.getSerialNumber().toString(16)
        + ", valid until " + leaf.getNotAfter().toInstant() + ")";
  }

  /** Reads the files as they are now; never throws (an unreadable file is part of the reading). */
  static Reading read(TlsFiles files) {
    try {
      byte[] cert = bytes(TlsFiles.CERT_OPTION, files.cert());
      byte[] key = bytes(TlsFiles.KEY_OPTION, files.key());
      Path caPath = files.clientCa();
      byte[] ca = caPath == null ? null : bytes(TlsFiles.CLIENT_CA_OPTION, caPath);
      return new Reading(cert, key, ca, null);
    } catch (BadFile e) {
      return new Reading(null, null, null, e);
    }
  }

  private static byte[] bytes(String option, Path path) throws BadFile {
    try {
      return Files.readAllBytes(path);
    } catch (NoSuchFileException e) {
      throw new BadFile(option, path, "no such file (expected: a PEM file)", null);
    } catch (AccessDeniedException e) {
      throw new BadFile(option, path, "not readable by this process (expected: a PEM file it may read)", null);
    } catch (IOException e) {
      throw new BadFile(option, path, "cannot be read: " + e + " (expected: a PEM file)", e);
    }
  }

  private static X509Certificate[] certificates(String option, Path path, byte[] pem, String expected) throws BadFile {
    X509Certificate[] certs;
    try {
      certs = CertificateUtils.getX509Certificates(new ByteArrayInputStream(pem));
    } catch (GeneralSecurityException | RuntimeException e) {
      throw new BadFile(option, path, "not PEM certificates: " + e.getMessage() + " (expected: " + expected + ")", e);
    }
    if (certs.length == 0) {
      throw new BadFile(option, path, "holds no certificate (expected: -----BEGIN CERTIFICATE----- blocks, "
          + expected + ")", null);
    }
    return certs;
  }

  private static PrivateKey privateKey(Path path, byte[] pem) throws BadFile {
    String text = new String(pem, StandardCharsets.US_ASCII);
    if (!text.contains("-----BEGIN PRIVATE KEY-----")) {
      String problem = text.contains("-----BEGIN RSA PRIVATE KEY-----") || text.contains("-----BEGIN EC PRIVATE KEY-----")
          ? "a key in the traditional OpenSSL format; convert it with openssl pkcs8 -topk8 -nocrypt"
          : text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")
              ? "an encrypted key; the server takes unencrypted keys only"
              : "holds no private key";
      throw new BadFile(TlsFiles.KEY_OPTION, path, problem + " (expected: -----BEGIN PRIVATE KEY-----, PKCS#8)", null);
    }
    try {
      return CertificateUtils.getPrivateKey(new ByteArrayInputStream(pem));
    } catch (IOException | GeneralSecurityException | RuntimeException e) {
      throw new BadFile(TlsFiles.KEY_OPTION, path, "not a PKCS#8 RSA or EC private key: " + e
          + " (expected: -----BEGIN PRIVATE KEY-----)", e);
    }
  }

  /** Whether {@code key} signs what {@code publicKey} verifies. */
  private static boolean belongs(PrivateKey key, PublicKey publicKey) {
    if (!key.getAlgorithm().equals(publicKey.getAlgorithm())) {
      return false;
    }
    String algorithm = switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      default -> key.getAlgorithm();
    };
    try {
      byte[] probe = new byte[32];
      new SecureRandom().nextBytes(probe);
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(publicKey);
      verifier.update(probe);
      return verifier.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static String digest(byte @Nullable [] cert, byte @Nullable [] key, byte @Nullable [] clientCa) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      for (byte[] part : new byte[][] {cert, key, clientCa}) {
        if (part == null) {
          sha.update((byte) 0);
        } else {
          sha.update((byte) 1);
          sha.update(Integer.toString(part.length).getBytes(StandardCharsets.US_ASCII));
          sha.update((byte) ':');
          sha.update(part);
        }
      }
      return HexFormat.of().formatHex(sha.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
