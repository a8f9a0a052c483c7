package io.roster.server.tls;

import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import io.roster.server.time.Scheduler;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TLS material of the client-facing ports, read from {@link TlsFiles} and kept current.
 *
 * <p>The certificate and key live in grpc-java's {@link AdvancedTlsX509KeyManager}, the client
 * CAs (when clients must present a certificate) in its {@link AdvancedTlsX509TrustManager}: both
 * are asked afresh on every handshake, so swapping what they hold changes what new connections
 * get, and leaves alone the connections (and the sessions on them) that are already open. The
 * gRPC port takes them as {@link #grpcCredentials()}, the HTTP port as {@link #sslContext()}.
 *
 * <p>{@link #startReloading} reads the files every {@link #RELOAD_PERIOD} on the server's
 * scheduler. Changed files that parse (and whose key belongs to the certificate) replace the
 * material, with one INFO line. Changed files that do not are ignored until they change again:
 * the old material stays, and one WARN says why, once the same bad files have been seen on two
 * reads in a row, so that a rotation that writes the certificate and the key one after the other
 * does not warn in between. The library's own file watcher is not used: it logs an error on every
 * read while a file is bad, and does not check that the key fits the certificate.
 *
 * <p>Thread-safe.
 */
public final class ServerTls implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ServerTls.class);

  /** How often the files are read again. */
  public static final Duration RELOAD_PERIOD = Duration.ofSeconds(2);

  /** The protocol versions the client and HTTP ports speak. */
  public static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

  /**
   * The cipher suites the client and HTTP ports accept, in the server's order of preference: TLS
   * 1.3's, and TLS 1.2's with an ephemeral ECDH key exchange and an AEAD cipher (AES-GCM or
   * ChaCha20-Poly1305); no CBC, no static RSA key exchange, no finite-field DHE (decision 82). The
   * gRPC port negotiates exactly this set already (grpc-netty's HTTP/2 list); the HTTP port is
   * limited to it by {@link #sslParameters()}.
   */
  public static final List<String> CIPHER_SUITES = List.of(
      "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
      "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
      "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
      "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256");

  private final TlsFiles files;
  private final AdvancedTlsX509KeyManager keys = new AdvancedTlsX509KeyManager();
  private final @Nullable AdvancedTlsX509TrustManager clientTrust;
  private final SSLContext sslContext;
  private volatile Material current;

  // Guarded by this: the reload state.
  /** The last reading that failed to parse, once, and whether its failure was logged. */
  private @Nullable String failing;
  private boolean failingWarned;
  private @Nullable Scheduler scheduler;
  private Duration period = RELOAD_PERIOD;
  private Scheduler.@Nullable Cancellable next;
  private boolean closed;

  private ServerTls(TlsFiles files, Material material) {
    this.files = files;
    this.current = material;
    this.clientTrust = files.mutual() ? newClientTrustManager() : null;
    apply(material);
    try {
      this.sslContext = SSLContext.getInstance("TLS");
      sslContext.init(new KeyManager[] {keys}, clientTrust == null ? null : new TrustManager[] {clientTrust}, null);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("this JDK offers no TLS context", e);
    }
  }

  /** A trust manager for client certificates: their chain is checked, no name is expected of a client. */
  private static AdvancedTlsX509TrustManager newClientTrustManager() {
    try {
      return AdvancedTlsX509TrustManager.newBuilder()
          .setVerification(AdvancedTlsX509TrustManager.Verification.CERTIFICATE_ONLY_VERIFICATION)
          .build();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("this JDK offers no X.509 trust manager", e);
    }
  }

  /**
   * Reads and checks the files once.
   *
   * @throws IllegalArgumentException naming the option, the path and the problem, when a file is
   *     missing, unreadable or not what its option promises, or the key does not fit the certificate
   */
  public static ServerTls load(TlsFiles files) {
    Objects.requireNonNull(files, "files");
    try {
      return new ServerTls(files, Material.read(files).parse(files));
    } catch (Material.BadFile e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  /** Reads the files every {@code period} on {@code scheduler} from now on, until {@link #close()}. */
  public synchronized void startReloading(Scheduler scheduler, Duration period) {
    if (closed || this.scheduler != null) {
      return;
    }
    this.scheduler = scheduler;
    this.period = period;
    next = scheduler.schedule(this::tick, period);
  }

  private void tick() {
    try {
      reload();
    } catch (RuntimeException e) {
      log.warn("TLS: reading {} failed; keeping the {}", files.cert(), current.describe(), e);
    }
    synchronized (this) {
      if (!closed && scheduler != null) {
        next = scheduler.schedule(this::tick, period);
      }
    }
  }

  /**
   * Reads the files now, as a periodic reload does.
   *
   * @return true when new material was taken
   */
  public synchronized boolean reload() {
    Material.Reading reading = Material.read(files);
    if (reading.fingerprint.equals(current.fingerprint)) {
      failing = null;
      return false;
    }
    Material material;
    try {
      material = reading.parse(files);
      apply(material);
    } catch (Material.BadFile | IllegalStateException e) {
      if (!reading.fingerprint.equals(failing)) {
        // Maybe half-way through a rotation: the next read decides.
        failing = reading.fingerprint;
        failingWarned = false;
      } else if (!failingWarned) {
        failingWarned = true;
        log.warn("TLS: {}; keeping the {} until the files change again", e.getMessage(), current.describe());
      }
      return false;
    }
    current = material;
    failing = null;
    log.info("TLS: new material from {} and {}: {}; new connections get it, open ones keep theirs", files.cert(),
        files.key(), material.describe());
    return true;
  }

  /** Swaps the managers' contents: the trust first, which may refuse, then the key, which does not. */
  private void apply(Material material) {
    if (clientTrust != null) {
      try {
        clientTrust.updateTrustCredentials(Objects.requireNonNull(material.clientCas, "parsed with the client CAs"));
      } catch (IOException | GeneralSecurityException e) {
        throw new IllegalStateException(TlsFiles.CLIENT_CA_OPTION + " " + files.clientCa()
            + ": refused by the trust manager: " + e, e);
      }
    }
    keys.updateIdentityCredentials(material.chain, material.key);
  }

  /** The credentials of a gRPC server: this material, client certificates required when mutual. */
  public ServerCredentials grpcCredentials() {
    TlsServerCredentials.Builder builder = TlsServerCredentials.newBuilder().keyManager(keys);
    if (clientTrust != null) {
      builder.trustManager(clientTrust).clientAuth(TlsServerCredentials.ClientAuth.REQUIRE);
    }
    return builder.build();
  }

  /** A JDK TLS context over the same managers, for listeners that are not gRPC (the HTTP port). */
  public SSLContext sslContext() {
    return sslContext;
  }

  /**
   * The parameters a listener on {@link #sslContext()} applies to each connection: {@link
   * #PROTOCOLS} and those of {@link #CIPHER_SUITES} this JDK supports, in that order, with a client
   * certificate required when mutual.
   */
  public SSLParameters sslParameters() {
    SSLParameters parameters = sslContext.getDefaultSSLParameters();
    parameters.setProtocols(PROTOCOLS.toArray(String[]::new));
    parameters.setCipherSuites(supportedCipherSuites().toArray(String[]::new));
    parameters.setUseCipherSuitesOrder(true);
    parameters.setNeedClientAuth(clientTrust != null);
    return parameters;
  }

  /** {@link #CIPHER_SUITES} that this JDK's TLS context supports, in their order. */
  public List<String> supportedCipherSuites() {
    List<String> supported = Arrays.asList(sslContext.getSupportedSSLParameters().getCipherSuites());
    return CIPHER_SUITES.stream().filter(supported::contains).toList();
  }

  /** The key manager every listener's handshakes ask for the certificate: always the current one. */
  public AdvancedTlsX509KeyManager keyManager() {
    return keys;
  }

  /** The trust manager that checks client certificates, or null when none is asked for. */
  public @Nullable AdvancedTlsX509TrustManager clientTrustManager() {
    return clientTrust;
  }

  /** Whether clients must present a certificate signed by one of the client CAs. */
  public boolean mutual() {
    return clientTrust != null;
  }

  /** The files this material comes from. */
  public TlsFiles files() {
    return files;
  }

  /** The certificate now served, in a few words (subject, serial, expiry). */
  public String describe() {
    return current.describe();
  }

  /** When the certificate now served stops being valid (its notAfter); a reload that takes new files moves it. */
  public Instant notAfter() {
    return current.chain[0].getNotAfter().toInstant();
  }

  /** Stops reloading. Connections keep working; the material stays as it is. */
  @Override
  public synchronized void close() {
    closed = true;
    if (next != null) {
      next.cancel();
      next = null;
    }
  }
}
