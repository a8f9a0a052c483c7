package io.roster.server.config;

import io.roster.server.tls.TlsFiles;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * TLS of the client and HTTP ports ({@code --tls-cert}, {@code --tls-key}, {@code
 * --tls-client-ca}); all null: plaintext. Immutable; {@link ServerConfig} checks they come in
 * pairs.
 */
public record TlsSettings(@Nullable Path tlsCert, @Nullable Path tlsKey, @Nullable Path tlsClientCa) {

  /** The TLS files of the client and HTTP ports, or null when they speak plaintext. */
  public @Nullable TlsFiles files() {
    return tlsCert == null || tlsKey == null ? null : new TlsFiles(tlsCert, tlsKey, tlsClientCa);
  }
}
