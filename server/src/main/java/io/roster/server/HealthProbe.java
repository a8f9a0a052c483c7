package io.roster.server;

import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.TlsChannelCredentials;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.util.AdvancedTlsX509KeyManager;
import io.roster.server.tls.Pki;
import java.io.IOException;
import java.io.PrintStream;
import java.net.Socket;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The container health check (docker/Dockerfile): {@code java -cp roster-server.jar
 * io.roster.server.HealthProbe [port]} asks {@code grpc.health.v1.Health/Check} for the whole
 * server (the empty service name) on {@code 127.0.0.1:port} (default 9848), with a 2 s deadline.
 * It prints the answer on one line and exits 0 when it is SERVING, 1 otherwise: NOT_SERVING
 * (starting, draining or stopping), no answer within the deadline, a refused connection, a bad
 * argument. Docker reads 1 as "unhealthy" (2 is reserved), so the probe never exits 2.
 *
 * <p>When the environment turns TLS on ({@code ROSTER_TLS_CERT} and {@code ROSTER_TLS_KEY}, as the
 * server reads them), the probe speaks TLS and accepts exactly the certificate in {@code
 * ROSTER_TLS_CERT}, whatever names it carries; with {@code ROSTER_TLS_CLIENT_CA} it presents that
 * same certificate and key, which the server accepts when a client CA signed it (docs/operations.md,
 * TLS). Right after a rotation the server may serve the new certificate a reload period before
 * (or after) the probe reads it: one probe may fail, which Docker's retries absorb.
 *
 * <p>The runtime image has no grpcurl; this class needs only what the server jar has already.
 */
public final class HealthProbe {

  static final int DEFAULT_PORT = 9848;
  static final Duration DEADLINE = Duration.ofSeconds(2);

  private HealthProbe() {}

  public static void main(String[] args) {
    System.exit(run(args, System.getenv(), DEADLINE, System.out));
  }

  /** Probes {@code 127.0.0.1} in plaintext; see {@link #run(String[], Map, Duration, PrintStream)}. */
  static int run(String[] args, Duration deadline, PrintStream out) {
    return run(args, Map.of(), deadline, out);
  }

  /**
   * Probes {@code 127.0.0.1}, over TLS when {@code env} says so; returns the exit status (0 =
   * SERVING) after printing the answer to {@code out}.
   */
  static int run(String[] args, Map<String, String> env, Duration deadline, PrintStream out) {
    int port;
    try {
      port = port(args);
    } catch (IllegalArgumentException e) {
      out.println("usage: HealthProbe [port]: " + e.getMessage());
      return 1;
    }
    ChannelCredentials credentials;
    try {
      credentials = credentials(env);
    } catch (IOException | RuntimeException e) {
      out.println("127.0.0.1:" + port + " cannot read the TLS files: " + e.getMessage());
      return 1;
    }
    String answer = check("127.0.0.1", port, credentials, deadline);
    out.println("127.0.0.1:" + port + " " + answer);
    return answer.equals(ServingStatus.SERVING.name()) ? 0 : 1;
  }

  /**
   * One {@code Health/Check} on a channel of its own; returns the serving status's name, or the
   * gRPC status code and description when the call failed (never throws for a failed call).
   */
  static String check(String host, int port, ChannelCredentials credentials, Duration deadline) {
    ManagedChannel channel = NettyChannelBuilder.forAddress(host, port, credentials).build();
    try {
      return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS)
          .check(HealthCheckRequest.getDefaultInstance()).getStatus().name();
    } catch (StatusRuntimeException e) {
      String description = e.getStatus().getDescription();
      return e.getStatus().getCode() + (description == null ? "" : ": " + description);
    } finally {
      channel.shutdownNow();
    }
  }

  /** Plaintext, or TLS pinned to the server's own certificate when the environment names it. */
  static ChannelCredentials credentials(Map<String, String> env) throws IOException {
    String cert = env.get("ROSTER_TLS_CERT");
    String key = env.get("ROSTER_TLS_KEY");
    if (cert == null || cert.isBlank() || key == null || key.isBlank()) {
      return InsecureChannelCredentials.create();
    }
    List<X509Certificate> chain = Pki.readCertificates(Path.of(cert));
    TlsChannelCredentials.Builder builder = TlsChannelCredentials.newBuilder().trustManager(new Pinned(chain.get(0)));
    String clientCa = env.get("ROSTER_TLS_CLIENT_CA");
    if (clientCa != null && !clientCa.isBlank()) {
      AdvancedTlsX509KeyManager own = new AdvancedTlsX509KeyManager();
      own.updateIdentityCredentials(chain.toArray(new X509Certificate[0]), Pki.readPrivateKey(Path.of(key)));
      builder.keyManager(own);
    }
    return builder.build();
  }

  /** Trusts one certificate, the server's own, and checks no name: the probe knows whom it calls. */
  private static final class Pinned extends X509ExtendedTrustManager {
    private final X509Certificate expected;

    Pinned(X509Certificate expected) {
      this.expected = expected;
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      if (chain.length == 0 || !chain[0].equals(expected)) {
        throw new CertificateException("the server's certificate is not the one in ROSTER_TLS_CERT");
      }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      checkServerTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      checkServerTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      throw new CertificateException("the probe is a client");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      checkClientTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      checkClientTrusted(chain, authType);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }

  private static int port(String[] args) {
    if (args.length == 0) {
      return DEFAULT_PORT;
    }
    if (args.length > 1) {
      throw new IllegalArgumentException("one argument expected, got " + args.length);
    }
    try {
      int port = Integer.parseInt(args[0]);
      if (port >= 1 && port <= 65535) {
        return port;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException("port: " + args[0] + " (expected: 1..65535)");
  }
}
