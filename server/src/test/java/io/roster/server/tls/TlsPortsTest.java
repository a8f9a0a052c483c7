package io.roster.server.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.server.RosterServer;
import io.roster.server.config.ServerConfig;
import io.roster.server.testing.TestPki;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.io.IOException;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client port (gRPC) and the HTTP port of a server started with {@code --tls-cert} and
 * {@code --tls-key} (and {@code --tls-client-ca}), over real loopback sockets: who is refused, who
 * gets through, and what a rotation of the files changes.
 */
class TlsPortsTest {

  private static final Duration WAIT = TestTime.seconds(10);

  @TempDir
  Path dir;

  private final Pki.Authority ca = Pki.newAuthority("roster-test-ca");
  private final Pki.Authority otherCa = Pki.newAuthority("another-ca");
  private Path caFile;
  private Path otherCaFile;
  private Path cert;
  private Path key;
  private RosterServer server;
  private final List<ManagedChannel> channels = new ArrayList<>();

  @BeforeEach
  void files() throws IOException {
    caFile = dir.resolve("ca.crt");
    otherCaFile = dir.resolve("other-ca.crt");
    cert = dir.resolve("server.crt");
    key = dir.resolve("server.key");
    ca.writeCertificatePem(caFile);
    otherCa.writeCertificatePem(otherCaFile);
    ca.issue("roster-server", List.of("127.0.0.1", "localhost")).writePem(cert, key);
  }

  @AfterEach
  void stop() {
    channels.forEach(ManagedChannel::shutdownNow);
    if (server != null) {
      server.close();
    }
  }

  private RosterServer start(Path clientCa) {
    server = RosterServer.start(ServerConfig.builder().dataDir(null).host("127.0.0.1").port(0).httpPort(0)
        .shutdownGrace(Duration.ofMillis(200)).warmUp(Duration.ZERO)
        .tls(new TlsFiles(cert, key, clientCa)).build());
    return server;
  }

  /** The files of a certificate {@code issuer} issues to a client. */
  private Path[] clientCertificate(Pki.Authority issuer, String name) throws IOException {
    Path c = dir.resolve(name + ".crt");
    Path k = dir.resolve(name + ".key");
    issuer.issue(name, List.of("localhost")).writePem(c, k);
    return new Path[] {c, k};
  }

  private ManagedChannel channel(ChannelCredentials credentials) {
    ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port(), credentials).build();
    channels.add(channel);
    return channel;
  }

  private static ChannelCredentials trusting(Path ca, Path... clientCertAndKey) throws IOException {
    TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder().trustManager(ca.toFile());
    if (clientCertAndKey.length == 2) {
      b.keyManager(clientCertAndKey[0].toFile(), clientCertAndKey[1].toFile());
    }
    return b.build();
  }

  private static ServingStatus health(ManagedChannel channel) {
    return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(WAIT.toMillis(), TimeUnit.MILLISECONDS)
        .check(HealthCheckRequest.getDefaultInstance()).getStatus();
  }

  private static void assertRefused(ManagedChannel channel) {
    assertThatThrownBy(() -> health(channel))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
  }

  /** A JDK HTTPS client trusting {@code ca}, presenting the client certificate when given one. */
  private static HttpClient https(Path ca, Path... clientCertAndKey) throws Exception {
    SSLContext context = clientCertAndKey.length == 2
        ? TestPki.context(ca, clientCertAndKey[0], clientCertAndKey[1])
        : TestPki.context(Pki.readCertificate(ca), null, null);
    return HttpClient.newBuilder().sslContext(context).connectTimeout(WAIT).build();
  }

  private HttpResponse<String> get(HttpClient client, String scheme) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create(scheme + "://127.0.0.1:" + server.httpPort()
        + "/nacos/v1/ns/instance/list?serviceName=orders")).timeout(WAIT).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The certificate a new TLS connection to the client port is served (the handshake alone). */
  private BigInteger servedSerial() {
    return TestPki.served("127.0.0.1", server.port(), ca.certificate()).getSerialNumber();
  }

  /**
   * Handshakes with {@code port} offering only {@code suite} over {@code protocol} (and h2 by ALPN,
   * as gRPC asks); returns the suite negotiated.
   */
  private String handshake(int port, String protocol, String suite) throws Exception {
    SSLContext context = TestPki.context(ca.certificate(), null, null);
    try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
      socket.setSoTimeout((int) WAIT.toMillis());
      SSLParameters p = socket.getSSLParameters();
      p.setProtocols(new String[] {protocol});
      p.setCipherSuites(new String[] {suite});
      p.setApplicationProtocols(new String[] {"h2", "http/1.1"});
      socket.setSSLParameters(p);
      socket.startHandshake();
      return socket.getSession().getCipherSuite();
    }
  }

  @Test
  void bothPortsRefuseACbcSuiteAndTakeTheAeadOnes() throws Exception {
    start(null);
    for (int port : new int[] {server.httpPort(), server.port()}) {
      for (String cbc : List.of("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384")) {
        assertThatThrownBy(() -> handshake(port, "TLSv1.2", cbc)).as("%s on port %d", cbc, port)
            .isInstanceOf(SSLHandshakeException.class);
      }
      for (String aead : List.of("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
          "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256")) {
        assertThat(handshake(port, "TLSv1.2", aead)).as("port %d", port).isEqualTo(aead);
      }
      assertThat(handshake(port, "TLSv1.3", "TLS_AES_128_GCM_SHA256")).isEqualTo("TLS_AES_128_GCM_SHA256");
    }
  }

  @Test
  void theHttpPortStartsWithoutAWarningAboutWeakSuites() {
    ch.qos.logback.classic.Logger jetty = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger("org.eclipse.jetty");
    ListAppender<ILoggingEvent> seen = new ListAppender<>();
    seen.start();
    jetty.addAppender(seen);
    try {
      start(null);
    } finally {
      jetty.detachAppender(seen);
    }
    assertThat(seen.list).extracting(ILoggingEvent::getFormattedMessage).noneMatch(m -> m.contains("Weak cipher"));
  }

  @Test
  void theSuitesAreTheOnesGrpcNettyNegotiatesForHttp2() {
    // The client port takes grpc-netty's list and cannot be given another: the HTTP port's must match it.
    assertThat(ServerTls.CIPHER_SUITES)
        .containsExactlyInAnyOrderElementsOf(io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2SecurityUtil.CIPHERS);
  }

  @Test
  void aPlaintextClientIsRefusedAndAClientTrustingTheCaIsServed() throws Exception {
    start(null);
    assertRefused(channel(InsecureChannelCredentials.create()));
    assertThat(health(channel(trusting(caFile)))).isEqualTo(ServingStatus.SERVING);
  }

  @Test
  void aClientTrustingAnotherCaIsRefused() throws Exception {
    start(null);
    assertRefused(channel(trusting(otherCaFile)));
  }

  @Test
  void withClientCaAClientWithoutACertificateOrWithOneOfAnotherCaIsRefused() throws Exception {
    Path clients = dir.resolve("clients-ca.crt");
    ca.writeCertificatePem(clients);
    start(clients);
    assertRefused(channel(trusting(caFile)));
    assertRefused(channel(trusting(caFile, clientCertificate(otherCa, "stranger"))));
    assertThat(health(channel(trusting(caFile, clientCertificate(ca, "member"))))).isEqualTo(ServingStatus.SERVING);

    // The HTTP port asks the same.
    assertThatThrownBy(() -> get(https(caFile), "https")).isInstanceOf(IOException.class);
    assertThatThrownBy(() -> get(https(caFile, clientCertificate(otherCa, "stranger2")), "https"))
        .isInstanceOf(IOException.class);
    assertThat(get(https(caFile, clientCertificate(ca, "member2")), "https").statusCode()).isEqualTo(200);
  }

  @Test
  void theHttpPortServesHttpsAndTheV1ApiAnswers() throws Exception {
    start(null);
    HttpResponse<String> answer = get(https(caFile), "https");
    assertThat(answer.statusCode()).isEqualTo(200);
    assertThat(answer.body()).contains("\"hosts\":[]");
    assertThatThrownBy(() -> get(HttpClient.newBuilder().connectTimeout(WAIT).build(), "http"))
        .isInstanceOf(IOException.class);
    assertThatThrownBy(() -> get(https(otherCaFile), "https")).isInstanceOf(IOException.class);
  }

  @Test
  void aRotatedCertificateReachesNewConnectionsAndOpenSessionsStay() throws Exception {
    start(null);
    BigInteger first = servedSerial();
    TestSession open = new TestSession(channel(trusting(caFile))).hello("provider");
    assertThat(open.register("orders", "10.0.0.1", 8080).getOk()).isTrue();

    Pki.Issued next = ca.issue("roster-server", List.of("127.0.0.1", "localhost"));
    next.writePem(cert, key);
    await().atMost(WAIT).until(this::servedSerial, s -> s.equals(next.certificate().getSerialNumber()));
    assertThat(first).isNotEqualTo(next.certificate().getSerialNumber());

    // The session opened before the rotation goes on, on its connection.
    assertThat(open.register("orders", "10.0.0.2", 8080).getOk()).isTrue();
    assertThat(open.closed()).isNotDone();
    assertThat(server.sessions().count()).isEqualTo(1);
    assertThat(get(https(caFile), "https").body()).contains("10.0.0.1", "10.0.0.2");
    open.close();
  }
}
