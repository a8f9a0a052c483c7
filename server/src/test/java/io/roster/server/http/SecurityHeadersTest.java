package io.roster.server.http;

import java.net.InetAddress;
import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.RosterServer;
import io.roster.server.config.ServerConfig;
import io.roster.server.testing.TestTime;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every answer of the HTTP port carries the security headers, over a real socket: the console's
 * files, its redirect, the admin API, the Nacos v1 API, metrics, the event stream, a 404, and the
 * answer Jetty itself writes to a request it cannot parse.
 */
class SecurityHeadersTest {

  private static final Duration WAIT = TestTime.seconds(10);
  private static RosterServer server;
  private static final HttpClient http = HttpClient.newBuilder().connectTimeout(WAIT)
      .followRedirects(HttpClient.Redirect.NEVER).build();

  @BeforeAll
  static void start() {
    server = RosterServer.start(ServerConfig.builder().dataDir(null).host("127.0.0.1").port(0).httpPort(0)
        .shutdownGrace(Duration.ofMillis(200)).warmUp(Duration.ZERO).build());
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static HttpResponse<String> get(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + path)).timeout(WAIT)
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  private static void assertSecured(String what, HttpHeaders headers) {
    assertThat(headers.firstValue("X-Content-Type-Options")).as(what).hasValue("nosniff");
    assertThat(headers.firstValue("Referrer-Policy")).as(what).hasValue("no-referrer");
    assertThat(headers.firstValue("X-Frame-Options")).as(what).hasValue("DENY");
    assertThat(headers.firstValue("Content-Security-Policy")).as(what)
        .hasValueSatisfying(csp -> assertThat(csp).contains("default-src 'self'", "frame-ancestors 'none'",
            "script-src 'self'", "style-src 'self'").doesNotContain("unsafe-inline", "unsafe-eval"));
  }

  @Test
  void everyRouteAnswersWithTheSecurityHeaders() throws Exception {
    for (String path : List.of("/console/", "/console/index.html", "/console/app.js", "/console/style.css", "/console",
        "/nacos/", "/nacos/v3/admin/ns/service/list?namespaceId=public", "/roster/v1/admin/permissions",
        "/nacos/v1/ns/instance/list?serviceName=orders", "/nacos/v1/ns/instance/list", "/metrics", "/no/such/path")) {
      HttpResponse<String> answer = get(path);
      assertSecured(path + " (" + answer.statusCode() + ")", answer.headers());
    }
    assertThat(get("/console/").headers().firstValue("Content-Type")).hasValueSatisfying(
        t -> assertThat(t).startsWith("text/html"));
  }

  @Test
  void theEventStreamAnswersWithTheSecurityHeaders() throws Exception {
    HttpResponse<InputStream> stream = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + server.httpPort() + "/roster/v1/admin/events?namespaceId=public")).timeout(WAIT).build(),
        HttpResponse.BodyHandlers.ofInputStream());
    try (InputStream body = stream.body()) {
      assertThat(stream.statusCode()).isEqualTo(200);
      assertSecured("event stream", stream.headers());
    }
  }

  @Test
  void jettysOwnAnswerToARequestItCannotParseCarriesThemToo() throws Exception {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.httpPort())) {
      socket.setSoTimeout((int) WAIT.toMillis());
      OutputStream out = socket.getOutputStream();
      out.write("GET /console/ HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Line\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
      assertThat(answer).startsWith("HTTP/1.1 400").contains("X-Content-Type-Options: nosniff",
          "Referrer-Policy: no-referrer", "X-Frame-Options: DENY", "Content-Security-Policy: default-src 'self'");
    }
  }

  /** What Jetty refuses before any route sees it is answered in the API's JSON envelope, not as an HTML page. */
  @Test
  void jettysOwnRefusalsAreJsonWithTheirStatus() throws Exception {
    Map<String, String> requests = new java.util.LinkedHashMap<>();
    requests.put("400", "GET /console/ HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Line\r\n\r\n");
    requests.put("400 ", "GET /nacos/v1/ns/%2e%2e/instance/list HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    requests.put("414", "GET /metrics?x=" + "a".repeat(20_000) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    requests.put("431", "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + "b".repeat(20_000) + "\r\n\r\n");
    for (Map.Entry<String, String> r : requests.entrySet()) {
      String answer = raw(r.getValue());
      String status = r.getKey().strip();
      assertThat(answer).as("the answer to a request Jetty refuses with %s", status)
          .startsWith("HTTP/1.1 " + status).containsIgnoringCase("Content-Type: application/json")
          .contains("\"code\":" + status, "\"message\":").doesNotContain("<html", "<body");
    }
  }

  private String raw(String request) throws Exception {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.httpPort())) {
      socket.setSoTimeout((int) WAIT.toMillis());
      OutputStream out = socket.getOutputStream();
      out.write(request.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      socket.shutdownOutput();
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
    }
  }
}
