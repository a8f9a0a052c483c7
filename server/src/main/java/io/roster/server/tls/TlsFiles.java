package io.roster.server.tls;

import java.nio.file.Path;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The PEM files that turn TLS on, as the options name them.
 *
 * @param cert {@code --tls-cert}: the server's certificate chain, its own certificate first
 * @param key {@code --tls-key}: the private key of that certificate, PKCS#8
 * @param clientCa {@code --tls-client-ca}: the CA certificates a client's certificate must chain
 *     to, or null when clients need no certificate
 */
public record TlsFiles(Path cert, Path key, @Nullable Path clientCa) {

  /** The option that names the server's certificate chain. */
  public static final String CERT_OPTION = "--tls-cert";
  /** The option that names the private key. */
  public static final String KEY_OPTION = "--tls-key";
  /** The option that names the client CAs (mutual TLS). */
  public static final String CLIENT_CA_OPTION = "--tls-client-ca";

  public TlsFiles {
    Objects.requireNonNull(cert, "cert");
    Objects.requireNonNull(key, "key");
  }

  /** Whether clients must present a certificate signed by {@link #clientCa()}. */
  public boolean mutual() {
    return clientCa != null;
  }
}
