package io.roster.it;

import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.xds.XdsCredentialsProvider;
import java.io.File;
import java.io.IOException;
import java.util.Map;

/**
 * The xDS bootstrap's {@code "tls"} channel credentials with the {@code config} keys every gRPC
 * xDS client that supports them reads (grpc-go, and C-core under grpcio and grpc C++): {@code
 * ca_certificate_file} (the CA that signed the xDS server's certificate; the JVM's trust store
 * without it), and {@code certificate_file} with {@code private_key_file} (the client certificate
 * the server maps to an identity). grpc-java up to 1.83 registers {@code "tls"} too, but ignores
 * its {@code config} (it trusts the JVM's store and presents no client certificate), so a
 * grpc-java client of a Roster with mutual TLS puts this provider on its classpath (it is found
 * through {@code META-INF/services/io.grpc.xds.XdsCredentialsProvider}, and its priority wins over
 * grpc-java's own); the client is still configured from its bootstrap file alone. docs/xds.md
 * shows it.
 */
public final class BootstrapTlsCredentials extends XdsCredentialsProvider {

  @Override
  protected ChannelCredentials newChannelCredentials(Map<String, ?> config) {
    TlsChannelCredentials.Builder tls = TlsChannelCredentials.newBuilder();
    if (config == null) {
      return tls.build();
    }
    Object ca = config.get("ca_certificate_file");
    Object certificate = config.get("certificate_file");
    Object key = config.get("private_key_file");
    try {
      if (ca instanceof String file) {
        tls.trustManager(new File(file));
      }
      if (certificate instanceof String c && key instanceof String k) {
        tls.keyManager(new File(c), new File(k));
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("xDS bootstrap: channel_creds tls: " + e.getMessage(), e);
    }
    return tls.build();
  }

  @Override
  protected String getName() {
    return "tls";
  }

  @Override
  public boolean isAvailable() {
    return true;
  }

  @Override
  public int priority() {
    return 10; // grpc-java's own "tls" has 5
  }
}
