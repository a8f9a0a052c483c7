package io.roster.server.tls;

import io.roster.server.time.SystemScheduler;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Objects;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMEncryptedKeyPair;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.PKCS8EncryptedPrivateKeyInfo;
import org.bouncycastle.util.IPAddress;
import org.jspecify.annotations.Nullable;

/**
 * A small certificate toolkit: a throwaway certificate authority for one cluster (or one test),
 * the certificates it issues, and their PEM files.
 *
 * <pre>{@code
 * Pki.Authority ca = Pki.newAuthority("roster-cluster-ca");
 * Pki.Issued node1 = ca.issue("node1", List.of("127.0.0.1", "localhost"));
 * node1.writePem(dir.resolve("node1.crt"), dir.resolve("node1.key"));
 * ca.writePem(dir.resolve("ca.crt"), dir.resolve("ca.key"));
 * Pki.Authority same = Pki.loadAuthority(dir.resolve("ca.crt"), dir.resolve("ca.key"));
 * }</pre>
 *
 * <p>Keys are EC P-256 and signatures SHA256withECDSA. An issued certificate has its common name as
 * subject, every given DNS name, IP address or URI as a subject alternative name, and both extended key
 * usages (TLS server and TLS client), so that one certificate serves a member on both ends of a
 * connection. Certificates are written as PEM {@code CERTIFICATE} blocks, private keys as
 * unencrypted PKCS#8 ({@code PRIVATE KEY}) in files only their owner may read or write where the
 * file system has POSIX permissions. Every file is written to a temporary file beside it and moved
 * into place, so that a reader sees the old file or the new one, never half of one.
 *
 * <p>BouncyCastle builds the certificates and reads and writes PEM; it is used as a library and
 * installs no JCA provider: the keys, signatures and {@link X509Certificate}s are the JDK's own.
 */
public final class Pki {

  /** How long a new authority's certificate is valid unless told otherwise: ten years. */
  public static final Duration AUTHORITY_VALIDITY = Duration.ofDays(3650);

  /** How long an issued certificate is valid unless told otherwise: 825 days. */
  public static final Duration ISSUED_VALIDITY = Duration.ofDays(825);

  /** Certificates start to be valid this long before they are made, for clocks a little behind. */
  private static final Duration BACKDATE = Duration.ofHours(1);

  private static final String SIGNATURE = "SHA256withECDSA";
  private static final SecureRandom RANDOM = new SecureRandom();

  private Pki() {}

  /** A new authority: a fresh key pair and a self-signed CA certificate, valid for ten years. */
  public static Authority newAuthority(String commonName) {
    return newAuthority(commonName, AUTHORITY_VALIDITY);
  }

  /** A new authority whose self-signed CA certificate is valid for {@code validity} from now. */
  public static Authority newAuthority(String commonName, Duration validity) {
    KeyPair keys = newKeyPair();
    X500Name subject = name(commonName);
    Instant now = now();
    X509v3CertificateBuilder builder =
        new JcaX509v3CertificateBuilder(
            subject,
            serial(),
            Date.from(now.minus(BACKDATE)),
            Date.from(now.plus(validity)),
            subject,
            keys.getPublic());
    try {
      JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
      // Path length 0: this authority signs end-entity certificates only.
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
      builder.addExtension(
          Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      builder.addExtension(
          Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(keys.getPublic()));
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException("cannot build a CA certificate for " + commonName, e);
    }
    return new Authority(sign(builder, keys.getPrivate()), keys.getPrivate());
  }

  /**
   * The authority whose CA certificate and private key are in these PEM files (as {@link
   * Authority#writePem} writes them).
   *
   * @throws IOException when a file cannot be read
   * @throws IllegalArgumentException when a file holds no certificate or key, the certificate is
   *     not a CA certificate, or the key is not the certificate's
   */
  public static Authority loadAuthority(Path certificatePem, Path privateKeyPem)
      throws IOException {
    X509Certificate certificate = readCertificate(certificatePem);
    PrivateKey key = readPrivateKey(privateKeyPem);
    if (certificate.getBasicConstraints() < 0) {
      throw new IllegalArgumentException(
          certificatePem + " is not a CA certificate (its basic constraints say it is no CA)");
    }
    if (!keyMatches(certificate, key)) {
      throw new IllegalArgumentException(
          privateKeyPem + " is not the private key of the certificate in " + certificatePem);
    }
    return new Authority(certificate, key);
  }

  /** The certificates in a PEM file, in order; at least one. */
  public static List<X509Certificate> readCertificates(Path pem) throws IOException {
    List<X509Certificate> certificates = new ArrayList<>();
    try (PEMParser parser = new PEMParser(new StringReader(read(pem)))) {
      for (Object o = parse(parser, pem); o != null; o = parse(parser, pem)) {
        if (o instanceof X509CertificateHolder holder) {
          certificates.add(convert(holder, pem));
        }
      }
    }
    if (certificates.isEmpty()) {
      throw new IllegalArgumentException(pem + " holds no PEM certificate (BEGIN CERTIFICATE)");
    }
    return certificates;
  }

  /** The first certificate in a PEM file. */
  public static X509Certificate readCertificate(Path pem) throws IOException {
    return readCertificates(pem).get(0);
  }

  /**
   * The private key in a PEM file: unencrypted PKCS#8 ({@code PRIVATE KEY}) or the traditional
   * {@code EC PRIVATE KEY} / {@code RSA PRIVATE KEY}.
   */
  public static PrivateKey readPrivateKey(Path pem) throws IOException {
    JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
    try (PEMParser parser = new PEMParser(new StringReader(read(pem)))) {
      for (Object o = parse(parser, pem); o != null; o = parse(parser, pem)) {
        try {
          if (o instanceof PrivateKeyInfo info) {
            return converter.getPrivateKey(info);
          }
          if (o instanceof PEMKeyPair pair) {
            return converter.getKeyPair(pair).getPrivate();
          }
        } catch (IOException e) {
          throw new IllegalArgumentException(
              pem + " holds a private key that cannot be decoded: " + e.getMessage(), e);
        }
        if (o instanceof PKCS8EncryptedPrivateKeyInfo || o instanceof PEMEncryptedKeyPair) {
          throw new IllegalArgumentException(
              pem + " holds an encrypted private key; an unencrypted PKCS#8 key is expected");
        }
      }
    }
    throw new IllegalArgumentException(pem + " holds no PEM private key (BEGIN PRIVATE KEY)");
  }

  /** Whether {@code key} is the private key of {@code certificate}'s public key. */
  public static boolean keyMatches(X509Certificate certificate, PrivateKey key) {
    PublicKey publicKey = certificate.getPublicKey();
    if (!publicKey.getAlgorithm().equals(key.getAlgorithm())) {
      return false;
    }
    String algorithm =
        switch (key.getAlgorithm()) {
          case "EC" -> "SHA256withECDSA";
          case "RSA" -> "SHA256withRSA";
          default -> key.getAlgorithm(); // Ed25519, Ed448
        };
    try {
      byte[] probe = new byte[32];
      RANDOM.nextBytes(probe);
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

  /** A certificate as one PEM {@code CERTIFICATE} block. */
  public static String toPem(X509Certificate certificate) {
    return pem(certificate);
  }

  /** A private key as one unencrypted PKCS#8 PEM {@code PRIVATE KEY} block. */
  public static String toPem(PrivateKey key) {
    try {
      return pem(new JcaPKCS8Generator(key, null));
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot encode the private key as PKCS#8", e);
    }
  }

  /** A certificate authority: its CA certificate and private key. */
  public static final class Authority {
    /** The CA's own certificate and key. */
    private final Issued self;

    private Authority(X509Certificate certificate, PrivateKey privateKey) {
      this.self = new Issued(certificate, privateKey);
    }

    /** The self-signed CA certificate: what a peer trusts. */
    public X509Certificate certificate() {
      return self.certificate();
    }

    public PrivateKey privateKey() {
      return self.privateKey();
    }

    /**
     * A new key pair and a certificate for it signed by this authority, valid for 825 days, with
     * {@code commonName} as subject and each of {@code names} as a subject alternative name: an IP
     * address (v4 or v6) where the name is one, a URI where it has a scheme ({@code
     * spiffe://corp.example/ns/prod/sa/frontend}), a DNS name otherwise.
     */
    public Issued issue(String commonName, List<String> names) {
      return issue(commonName, names, ISSUED_VALIDITY);
    }

    /** As {@link #issue(String, List)}, valid for {@code validity} from now. */
    public Issued issue(String commonName, List<String> names, Duration validity) {
      KeyPair keys = newKeyPair();
      Instant now = now();
      X509v3CertificateBuilder builder =
          new JcaX509v3CertificateBuilder(
              self.certificate(),
              serial(),
              Date.from(now.minus(BACKDATE)),
              Date.from(now.plus(validity)),
              name(commonName),
              keys.getPublic());
      try {
        JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
        builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
        builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
        builder.addExtension(
            Extension.extendedKeyUsage,
            false,
            new ExtendedKeyUsage(
                new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
        builder.addExtension(
            Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(keys.getPublic()));
        builder.addExtension(
            Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(self.certificate()));
        if (!names.isEmpty()) {
          GeneralName[] alternatives = new GeneralName[names.size()];
          for (int i = 0; i < alternatives.length; i++) {
            String n = Objects.requireNonNull(names.get(i), "names");
            alternatives[i] =
                IPAddress.isValid(n)
                    ? new GeneralName(GeneralName.iPAddress, n)
                    : n.contains("://")
                        ? new GeneralName(GeneralName.uniformResourceIdentifier, n)
                        : new GeneralName(GeneralName.dNSName, n);
          }
          builder.addExtension(
              Extension.subjectAlternativeName, false, new GeneralNames(alternatives));
        }
      } catch (IOException | GeneralSecurityException e) {
        throw new IllegalStateException("cannot build a certificate for " + commonName, e);
      }
      return new Issued(sign(builder, self.privateKey()), keys.getPrivate());
    }

    /** Writes the CA certificate and the CA's private key (owner-only) as PEM files. */
    public void writePem(Path certificatePem, Path privateKeyPem) throws IOException {
      self.writePem(certificatePem, privateKeyPem);
    }

    /** Writes the CA certificate alone: the trust file a member or client is given. */
    public void writeCertificatePem(Path certificatePem) throws IOException {
      write(certificatePem, toPem(self.certificate()), false);
    }
  }

  /** A certificate issued by an {@link Authority}, with its private key. */
  public record Issued(X509Certificate certificate, PrivateKey privateKey) {

    /** The certificate's subject, never the key. */
    @Override
    public String toString() {
      return "Issued[" + certificate.getSubjectX500Principal().getName() + "]";
    }

    /** Writes the certificate and its private key (owner-only) as PEM files. */
    public void writePem(Path certificatePem, Path privateKeyPem) throws IOException {
      write(certificatePem, toPem(certificate), false);
      write(privateKeyPem, toPem(privateKey), true);
    }
  }

  /** Now, from the wall clock's seam (decision 57): certificates are valid from and until a time. */
  private static Instant now() {
    return Instant.EPOCH.plus(SystemScheduler.wallClockMicros(), ChronoUnit.MICROS);
  }

  private static KeyPair newKeyPair() {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
      return generator.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("this JDK cannot make EC P-256 keys", e);
    }
  }

  private static X500Name name(String commonName) {
    if (commonName.isBlank()) {
      throw new IllegalArgumentException("commonName: blank; a name such as node1 is expected");
    }
    return new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, commonName).build();
  }

  /** A random positive 127-bit serial number, unique across throwaway authorities in practice. */
  private static BigInteger serial() {
    return new BigInteger(127, RANDOM).add(BigInteger.ONE);
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey issuerKey) {
    try {
      X509CertificateHolder holder =
          builder.build(new JcaContentSignerBuilder(SIGNATURE).build(issuerKey));
      return new JcaX509CertificateConverter().getCertificate(holder);
    } catch (OperatorCreationException | CertificateException e) {
      throw new IllegalStateException("cannot sign a certificate", e);
    }
  }

  private static X509Certificate convert(X509CertificateHolder holder, Path pem) {
    try {
      return new JcaX509CertificateConverter().getCertificate(holder);
    } catch (CertificateException e) {
      throw new IllegalArgumentException(
          pem + " holds a certificate that cannot be decoded: " + e.getMessage(), e);
    }
  }

  private static String pem(Object object) {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
      writer.writeObject(object);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString();
  }

  private static @Nullable Object parse(PEMParser parser, Path pem) {
    try {
      return parser.readObject();
    } catch (IOException e) {
      throw new IllegalArgumentException(pem + " is not valid PEM: " + e.getMessage(), e);
    }
  }

  /** The file's text; an {@link IOException} that names the path and what kept it from being read. */
  private static String read(Path path) throws IOException {
    try {
      // PEM is ASCII; Latin-1 reads any bytes, so that a binary file is reported as not PEM.
      return Files.readString(path, StandardCharsets.ISO_8859_1);
    } catch (NoSuchFileException e) {
      throw new IOException("cannot read " + path + ": no such file", e);
    } catch (AccessDeniedException e) {
      throw new IOException("cannot read " + path + ": permission denied", e);
    } catch (IOException e) {
      throw new IOException("cannot read " + path + ": " + e, e);
    }
  }

  /**
   * Writes {@code text} to a temporary file beside {@code path} (owner-only where the file system
   * has POSIX permissions) and moves it into place; a certificate is then made readable by all.
   */
  private static void write(Path path, String text, boolean secret) throws IOException {
    Path target = path.toAbsolutePath();
    Path dir = Objects.requireNonNull(target.getParent(), "a file has a parent directory");
    Files.createDirectories(dir);
    // createTempFile makes the file owner-only (rw-------) on POSIX file systems.
    Path temp = Files.createTempFile(dir, "." + target.getFileName(), ".tmp");
    try {
      Files.writeString(temp, text, StandardCharsets.US_ASCII);
      PosixFileAttributeView posix = Files.getFileAttributeView(temp, PosixFileAttributeView.class);
      if (posix != null) {
        posix.setPermissions(PosixFilePermissions.fromString(secret ? "rw-------" : "rw-r--r--"));
      }
      Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(temp);
    }
  }
}
