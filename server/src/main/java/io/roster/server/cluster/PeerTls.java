package io.roster.server.cluster;

import io.roster.server.config.ClusterSettings;
import io.roster.server.config.ServerConfig;
import io.roster.server.time.SystemScheduler;
import io.roster.server.tls.Pki;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.CertificateParsingException;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.bouncycastle.util.IPAddress;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The peer port's mutual TLS (decision 63): this member's certificate and key and the cluster's
 * CA, read from {@code --peer-tls-cert}, {@code --peer-tls-key} and {@code --peer-tls-ca} and
 * given to Ratis's gRPC transport for all three of its sides (the server port, which also carries
 * Ratis's client and admin services, and the clients this member opens to the others).
 *
 * <p>Both ends present a certificate and both check the other's chain against the CA. The end
 * that connects also checks that the other's certificate names the host it dialled (its {@code
 * --members} address), as gRPC does for every TLS channel; the end that accepts checks the CA
 * alone, since a connecting member's address is not known in advance. The files are read once,
 * at start: a new certificate takes effect when the member restarts.
 */
public final class PeerTls {

  private static final String SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
  private static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
  private static final String ANY_USAGE = "2.5.29.37.0";
  private static final int DNS = 2;
  private static final int IP = 7;
  private static final Logger log = LoggerFactory.getLogger(PeerTls.class);

  private PeerTls() {}

  /**
   * Reads and checks the peer TLS files as {@link ClusterNode} will, so that a bad file stops the
   * server before anything starts; nothing for a standalone server or {@code --peer-tls off}.
   *
   * @throws IllegalArgumentException naming the option, its path and what is wrong
   */
  public static void check(ServerConfig config) {
    if (config.clustered()) {
      load(config.cluster(), null);
    }
  }

  /** Ratis's parameters for this member: its TLS on every side, or none when off. */
  static Parameters parameters(@Nullable GrpcTlsConfig tls) {
    Parameters p = new Parameters();
    if (tls != null) {
      GrpcConfigKeys.TLS.setConf(p, tls);
    }
    return p;
  }

  /**
   * This member's TLS for Ratis, or null with {@code --peer-tls off}. {@link ServerConfig} has
   * made sure that, when on, all three files are named. With {@code selfHost} (this member's
   * {@code --members} host) it warns when the certificate does not name that host: the other
   * members, dialling it there, would refuse it.
   *
   * @throws IllegalArgumentException naming the option, its path and what is wrong
   */
  static @Nullable GrpcTlsConfig load(ClusterSettings config, @Nullable String selfHost) {
    return load(config, selfHost, null);
  }

  /**
   * Same, with {@code handshakes} (when given) told of every handshake and saying why one is
   * refused.
   */
  static @Nullable GrpcTlsConfig load(ClusterSettings config, @Nullable String selfHost,
      @Nullable PeerHandshakes handshakes) {
    if (!config.peerTls()) {
      return null;
    }
    Path certPath = Objects.requireNonNull(config.peerTlsCert(), "peer-tls-cert");
    Path keyPath = Objects.requireNonNull(config.peerTlsKey(), "peer-tls-key");
    Path caPath = Objects.requireNonNull(config.peerTlsCa(), "peer-tls-ca");
    List<X509Certificate> chain = read("peer-tls-cert", () -> Pki.readCertificates(certPath));
    PrivateKey key = read("peer-tls-key", () -> Pki.readPrivateKey(keyPath));
    List<X509Certificate> cas = read("peer-tls-ca", () -> Pki.readCertificates(caPath));
    X509Certificate cert = chain.get(0);
    current("peer-tls-cert", certPath, cert);
    for (X509Certificate ca : cas) {
      current("peer-tls-ca", caPath, ca);
    }
    servesBothEnds(certPath, cert);
    if (!Pki.keyMatches(cert, key)) {
      throw new IllegalArgumentException("--peer-tls-key: " + keyPath + " is not the private key of the "
          + "certificate in " + certPath + " (--peer-tls-cert) (expected: the key issued with that certificate)");
    }
    signedBy(certPath, chain, caPath, cas);
    if (selfHost != null && !names(cert, selfHost)) {
      log.warn("--peer-tls-cert: the certificate in {} does not name this member's --members host {} (its names: {}); "
          + "members that reach it there will refuse it (expected: a certificate issued for {})", certPath, selfHost,
          names(cert), selfHost);
    }
    try {
      KeyManager keys = keyManager(chain, key);
      TrustManager trust = trustManager(cas);
      if (handshakes != null && keys instanceof X509ExtendedKeyManager k && trust instanceof X509ExtendedTrustManager t) {
        keys = handshakes.keys(k);
        trust = handshakes.trust(t);
      }
      return new GrpcTlsConfig(keys, trust, true);
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalArgumentException("--peer-tls-cert: cannot use " + certPath + " with its key " + keyPath
          + " and the CA in " + caPath + ": " + e, e);
    }
  }

  /**
   * When this member's peer certificate stops being valid (its notAfter), read from {@code
   * --peer-tls-cert} as {@link #load} reads it; null with {@code --peer-tls off}.
   *
   * @throws IllegalArgumentException naming the option when the file cannot be read
   */
  public static @Nullable Instant notAfter(ClusterSettings config) {
    if (!config.peerTls()) {
      return null;
    }
    Path certPath = Objects.requireNonNull(config.peerTlsCert(), "peer-tls-cert");
    return read("peer-tls-cert", () -> Pki.readCertificates(certPath)).get(0).getNotAfter().toInstant();
  }

  /** The certificate's subject alternative names (DNS names and IP addresses), as text. */
  static List<String> names(X509Certificate cert) {
    try {
      Collection<List<?>> all = cert.getSubjectAlternativeNames();
      if (all == null) {
        return List.of();
      }
      List<String> names = new ArrayList<>();
      for (List<?> n : all) {
        if (n.size() >= 2 && (Integer.valueOf(DNS).equals(n.get(0)) || Integer.valueOf(IP).equals(n.get(0)))) {
          names.add(String.valueOf(n.get(1)));
        }
      }
      return names;
    } catch (CertificateParsingException e) {
      return List.of();
    }
  }

  /**
   * Whether the certificate names {@code host} as a TLS client checks it: an IP address among its
   * IP addresses, a DNS name among its DNS names (a leading {@code *.} stands for one label).
   */
  static boolean names(X509Certificate cert, String host) {
    String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    boolean ip = IPAddress.isValid(h);
    for (String name : names(cert)) {
      if (ip && IPAddress.isValid(name)) {
        try {
          // Literals only: InetAddress does no lookup for them.
          if (InetAddress.getByName(name).equals(InetAddress.getByName(h))) {
            return true;
          }
        } catch (UnknownHostException e) {
          // not an address after all
        }
      } else if (!ip && !IPAddress.isValid(name)) {
        String n = name.toLowerCase(Locale.ROOT);
        String want = h.toLowerCase(Locale.ROOT);
        if (n.equals(want) || (n.startsWith("*.") && want.indexOf('.') > 0
            && want.substring(want.indexOf('.')).equals(n.substring(1)))) {
          return true;
        }
      }
    }
    return false;
  }

  private interface Reader<T> {
    T read() throws IOException;
  }

  /** What a reader returns; its failure as an error naming the option (the message names the path). */
  private static <T> T read(String option, Reader<T> reader) {
    try {
      return reader.read();
    } catch (IOException | IllegalArgumentException e) {
      throw new IllegalArgumentException("--" + option + ": " + e.getMessage(), e);
    }
  }

  private static void current(String option, Path path, X509Certificate cert) {
    try {
      // X509Certificate takes a Date; now comes from the wall clock's seam (decision 57).
      cert.checkValidity(Date.from(Instant.EPOCH.plus(SystemScheduler.wallClockMicros(), ChronoUnit.MICROS)));
    } catch (CertificateExpiredException e) {
      throw new IllegalArgumentException("--" + option + ": the certificate " + cert.getSubjectX500Principal()
          + " in " + path + " expired on " + cert.getNotAfter().toInstant() + " (expected: a current certificate)", e);
    } catch (CertificateNotYetValidException e) {
      throw new IllegalArgumentException("--" + option + ": the certificate " + cert.getSubjectX500Principal()
          + " in " + path + " is not valid before " + cert.getNotBefore().toInstant()
          + " (expected: a current certificate; is this machine's clock right?)", e);
    }
  }

  /** A member's certificate is presented as a TLS server's and a TLS client's. */
  private static void servesBothEnds(Path path, X509Certificate cert) {
    List<String> usages;
    try {
      usages = cert.getExtendedKeyUsage();
    } catch (CertificateParsingException e) {
      throw new IllegalArgumentException("--peer-tls-cert: " + path + ": its extended key usage cannot be read: "
          + e.getMessage(), e);
    }
    if (usages != null && !usages.contains(ANY_USAGE)
        && !(usages.contains(SERVER_AUTH) && usages.contains(CLIENT_AUTH))) {
      throw new IllegalArgumentException("--peer-tls-cert: the certificate in " + path + " is not for both TLS "
          + "server and TLS client (its extended key usages are " + usages + "; expected: both " + SERVER_AUTH
          + " and " + CLIENT_AUTH + ", as `roster-server.jar pki` issues them)");
    }
  }

  /** The other members check this member's chain against the same CA: it must pass here too. */
  private static void signedBy(Path certPath, List<X509Certificate> chain, Path caPath, List<X509Certificate> cas) {
    try {
      Set<TrustAnchor> anchors = new HashSet<>();
      for (X509Certificate ca : cas) {
        anchors.add(new TrustAnchor(ca, null));
      }
      PKIXParameters params = new PKIXParameters(anchors);
      params.setRevocationEnabled(false);
      // The chain up to, not including, an anchor: a CA in the cert file is left to the anchors.
      List<X509Certificate> path = chain.stream().filter(c -> !cas.contains(c)).toList();
      CertPathValidator.getInstance("PKIX")
          .validate(CertificateFactory.getInstance("X.509").generateCertPath(path), params);
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("--peer-tls-cert: the certificate in " + certPath + " is not signed by "
          + "the CA in " + caPath + " (--peer-tls-ca), so the other members would refuse it (" + e.getMessage()
          + "; expected: a certificate issued by the cluster's CA)", e);
    }
  }

  private static KeyManager keyManager(List<X509Certificate> chain, PrivateKey key)
      throws GeneralSecurityException, IOException {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    store.setKeyEntry("member", key, new char[0], chain.toArray(new X509Certificate[0]));
    KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    factory.init(store, new char[0]);
    return factory.getKeyManagers()[0];
  }

  private static TrustManager trustManager(List<X509Certificate> cas) throws GeneralSecurityException, IOException {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    for (int i = 0; i < cas.size(); i++) {
      store.setCertificateEntry("ca" + i, cas.get(i));
    }
    TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(store);
    return factory.getTrustManagers()[0];
  }
}
