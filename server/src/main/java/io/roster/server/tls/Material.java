package io.roster.server.tls;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.HexFormat;
import org.jspecify.annotations.Nullable;

/**
 * One reading of the TLS files: a digest of their bytes (to tell whether they changed since) and,
 * once parsed ({@link Pki}'s PEM reading), the certificate chain, its private key and the client
 * CAs. Parsing checks what a handshake would otherwise find out too late: that each file holds
 * what its option promises and that the key belongs to the chain's first certificate. The files
 * are parsed as they are when parsed: a file replaced between the digest and the parse is read
 * again at the next reload, since its digest differs from the one kept.
 */
final class Material {

  /** Whether {@code --tls-cert}, {@code --tls-key} or {@code --tls-client-ca} is wrong, and how. */
  static final class BadFile extends Exception {
    private static final long serialVersionUID = 1L;

    BadFile(String option, Path path, String problem, @Nullable Throwable cause) {
      // Pki's messages start with the path, which this one names already.
      super(option + " " + path + ": " + (problem.startsWith(path + " ") ? problem.substring(path.toString().length() + 1)
          : problem), cause);
    }
  }

  /** The files' contents at one moment, or why one could not be read. */
  static final class Reading {
    final String fingerprint;
    private final @Nullable BadFile unreadable;

    private Reading(byte @Nullable [] cert, byte @Nullable [] key, byte @Nullable [] clientCa,
        @Nullable BadFile unreadable) {
      this.unreadable = unreadable;
      this.fingerprint = unreadable != null ? "unreadable: " + unreadable.getMessage() : digest(cert, key, clientCa);
    }

    /** Parses what was read: the material, or the first problem found, naming its option and path. */
    Material parse(TlsFiles files) throws BadFile {
      if (unreadable != null) {
        throw unreadable;
      }
      X509Certificate[] chain = certificates(TlsFiles.CERT_OPTION, files.cert(),
          "the server's certificate first, then its intermediates");
      PrivateKey privateKey = privateKey(files.key());
      if (!Pki.keyMatches(chain[0], privateKey)) {
        throw new BadFile(TlsFiles.KEY_OPTION, files.key(), "not the private key of the first certificate in "
            + TlsFiles.CERT_OPTION + " " + files.cert() + " (" + chain[0].getSubjectX500Principal().getName()
            + "; expected: that certificate's key)", null);
      }
      X509Certificate[] cas = null;
      Path caPath = files.clientCa();
      if (caPath != null) {
        cas = certificates(TlsFiles.CLIENT_CA_OPTION, caPath, "the CA certificates that sign client certificates");
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

  private static X509Certificate[] certificates(String option, Path path, String expected) throws BadFile {
    try {
      return Pki.readCertificates(path).toArray(new X509Certificate[0]);
    } catch (IOException | IllegalArgumentException e) {
      throw new BadFile(option, path, String.valueOf(e.getMessage()) + " (expected: " + expected + ")", e);
    }
  }

  private static PrivateKey privateKey(Path path) throws BadFile {
    try {
      return Pki.readPrivateKey(path);
    } catch (IOException | IllegalArgumentException e) {
      throw new BadFile(TlsFiles.KEY_OPTION, path, String.valueOf(e.getMessage()) + " (expected: an unencrypted private key, "
          + "PKCS#8 or the traditional RSA or EC PEM)", e);
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
