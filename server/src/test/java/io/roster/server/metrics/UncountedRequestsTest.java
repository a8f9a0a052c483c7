package io.roster.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestTime;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the ports answer before any route or service sees a request is counted, over real
 * sockets, under labels that do not grow: random HTTP paths, the config center's 501, what Jetty
 * refuses itself (a header too large, a URI too long, a line it cannot parse), a connection cut
 * for sending its request too slowly, and gRPC methods the server does not have.
 */
class UncountedRequestsTest {

  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(1);
  private static final int RANDOM_PATHS = 300;

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.with(b -> b.httpRequestTimeout(REQUEST_TIMEOUT));

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(TestTime.seconds(10)).build();

  @Test
  void everyRandomPathIsCountedAndNoPathBecomesALabel() throws Exception {
    double before = total("roster_requests");
    int seriesBefore = series("roster_requests");
    Random random = new Random(7);
    int notFound = 0;
    for (int i = 0; i < RANDOM_PATHS; i++) {
      notFound += get(randomPath(random)) == 404 ? 1 : 0;
    }
    assertThat(notFound).isPositive();
    // Each request is counted once, whether a route answered it or none was there.
    assertThat(total("roster_requests") - before).isEqualTo(RANDOM_PATHS);
    assertThat(value("roster_requests", "protocol", "http", "type", "unknown", "result", "not_found")).isPositive();
    // A path never becomes a label: what the random paths added is a handful of series at most.
    assertThat(series("roster_requests") - seriesBefore).isLessThan(10);
  }

  @Test
  void aNotImplementedAnswerHasItsOwnResult() throws Exception {
    assertThat(get("/nacos/v1/cs/configs?dataId=a&group=b")).isEqualTo(501);
    assertThat(value("roster_requests", "protocol", "nacos-http", "type", "/nacos/v1/cs", "result", "unimplemented"))
        .isEqualTo(1);
    assertThat(value("roster_requests", "protocol", "nacos-http", "type", "/nacos/v1/cs", "result", "internal"))
        .isZero();
  }

  @Test
  void whatJettyRefusesItselfIsCountedByReason() throws Exception {
    assertThat(raw("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + "b".repeat(20_000) + "\r\n\r\n"))
        .startsWith("HTTP/1.1 431");
    assertThat(raw("GET /metrics?x=" + "a".repeat(20_000) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
        .startsWith("HTTP/1.1 414");
    assertThat(raw("GET /console/ HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Line\r\n\r\n")).startsWith("HTTP/1.1 400");
    assertThat(raw("GET /nacos/v1/ns/%2e%2e/instance/list HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
        .startsWith("HTTP/1.1 400");
    assertThat(raw("POST /nacos/v1/ns/instance HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10000000\r\n\r\n"))
        .startsWith("HTTP/1.1 413");

    assertThat(value("roster_http_refusals", "reason", "headers_too_large")).isEqualTo(1);
    assertThat(value("roster_http_refusals", "reason", "uri_too_long")).isEqualTo(1);
    assertThat(value("roster_http_refusals", "reason", "bad_request")).isEqualTo(2);
    assertThat(value("roster_http_refusals", "reason", "too_large")).isEqualTo(1);
    assertThat(value("roster_http_refusals", "reason", "slow")).isZero();
    assertThat(series("roster_http_refusals")).isEqualTo(6); // every reason, counted from zero, and no other
  }

  @Test
  void aConnectionCutForItsSlowRequestIsCounted() throws Exception {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), loopback.server().httpPort())) {
      socket.setSoTimeout((int) TestTime.seconds(30).toMillis());
      OutputStream out = socket.getOutputStream();
      out.write("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      assertThat(socket.getInputStream().read()).as("the server closes the connection").isEqualTo(-1);
    }
    await().atMost(TestTime.seconds(10)).until(() -> value("roster_http_refusals", "reason", "slow") == 1);
  }

  @Test
  void anUnknownGrpcMethodIsCountedUnderOneLabel() {
    int seriesBefore = series("roster_requests");
    for (int i = 0; i < 20; i++) {
      MethodDescriptor<InputStream, InputStream> method = MethodDescriptor.<InputStream, InputStream>newBuilder()
          .setType(MethodDescriptor.MethodType.UNARY)
          .setFullMethodName("made.up.Service" + i + "/Method" + i)
          .setRequestMarshaller(Raw.INSTANCE).setResponseMarshaller(Raw.INSTANCE).build();
      assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(loopback.channel(), method,
          io.grpc.CallOptions.DEFAULT.withDeadlineAfter(10, java.util.concurrent.TimeUnit.SECONDS),
          new ByteArrayInputStream(new byte[0])))
          .isInstanceOfSatisfying(StatusRuntimeException.class,
              e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
    }
    assertThat(value("roster_requests", "protocol", "roster", "type", "unknown", "result", "unimplemented"))
        .isEqualTo(20);
    assertThat(series("roster_requests") - seriesBefore).isEqualTo(1);
  }

  // --- helpers ---

  /** Passes a message's bytes through. */
  private enum Raw implements MethodDescriptor.Marshaller<InputStream> {
    INSTANCE;

    @Override
    public InputStream stream(InputStream value) {
      return value;
    }

    @Override
    public InputStream parse(InputStream stream) {
      return stream;
    }
  }

  private static String randomPath(Random random) {
    String[] starts = {"", "/nacos", "/nacos/v1", "/roster", "/roster/v1/admin", "/console", "/metrics", "/x"};
    StringBuilder path = new StringBuilder(starts[random.nextInt(starts.length)]);
    int parts = 1 + random.nextInt(3);
    for (int i = 0; i < parts; i++) {
      path.append('/');
      int length = 1 + random.nextInt(12);
      for (int j = 0; j < length; j++) {
        path.append((char) ('a' + random.nextInt(26)));
      }
    }
    return path.toString();
  }

  private int get(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + loopback.server().httpPort() + path))
        .timeout(TestTime.seconds(10)).build(), BodyHandlers.discarding()).statusCode();
  }

  private String raw(String request) throws Exception {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), loopback.server().httpPort())) {
      socket.setSoTimeout((int) TestTime.seconds(10).toMillis());
      OutputStream out = socket.getOutputStream();
      out.write(request.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      socket.shutdownOutput();
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
    }
  }

  private MetricSnapshot metric(String name) {
    for (MetricSnapshot s : loopback.server().metrics().prometheus().scrape()) {
      if (s.getMetadata().getPrometheusName().equals(name)) {
        return s;
      }
    }
    throw new AssertionError("no metric " + name);
  }

  private double value(String name, String... labels) {
    Labels wanted = Labels.of(labels);
    for (DataPointSnapshot p : metric(name).getDataPoints()) {
      if (p.getLabels().equals(wanted) && p instanceof CounterSnapshot.CounterDataPointSnapshot c) {
        return c.getValue();
      }
    }
    return 0;
  }

  private double total(String name) {
    double sum = 0;
    for (DataPointSnapshot p : metric(name).getDataPoints()) {
      sum += ((CounterSnapshot.CounterDataPointSnapshot) p).getValue();
    }
    return sum;
  }

  private int series(String name) {
    return metric(name).getDataPoints().size();
  }
}
