package io.roster.server.http;

import io.roster.server.tls.ServerTls;
import javax.net.ssl.SSLEngine;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/** The HTTP port's TLS in Jetty's terms (decision 64). Stateless. */
final class JettyTls {

  private JettyTls() {}

  /**
   * Jetty's TLS on the context {@code tls} keeps current: every handshake takes its material of the
   * moment, and only {@link ServerTls#CIPHER_SUITES} (TLS 1.3, and TLS 1.2 ECDHE with AES-GCM or
   * ChaCha20-Poly1305).
   */
  static SslContextFactory.Server contextFactory(ServerTls tls) {
    SslContextFactory.Server f = new SslContextFactory.Server() {
      @Override
      public void customize(SSLEngine engine) {
        super.customize(engine);
        engine.setSSLParameters(tls.sslParameters());
      }
    };
    f.setSslContext(tls.sslContext());
    f.setSniRequired(false);
    // The same suites and protocols as customize sets, so that what Jetty checks at start (and
    // warns about) is what each connection gets: AEAD suites only (decision 82).
    f.setIncludeProtocols(ServerTls.PROTOCOLS.toArray(String[]::new));
    f.setIncludeCipherSuites(tls.supportedCipherSuites().toArray(String[]::new));
    f.setUseCipherSuitesOrder(true);
    return f;
  }
}
