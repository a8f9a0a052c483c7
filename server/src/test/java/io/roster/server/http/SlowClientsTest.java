package io.roster.server.http;

import java.net.InetAddress;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Clients that trickle a request a byte at a time, on real sockets: 100 that never finish their
 * headers and 100 that never finish their body. Meanwhile other HTTP requests and a gRPC
 * session are served, and each trickling connection is closed once its request has taken longer
 * than {@code --http-request-timeout} to arrive.
 */
class SlowClientsTest {

  private static final Duration TIMEOUT = Duration.ofSeconds(2);
  private static final int SLOW = 200;

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.with(b -> b.httpRequestTimeout(TIMEOUT));

  private final ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
  private final List<SocketChannel> slow = new ArrayList<>();

  @AfterEach
  void stop() throws IOException {
    trickle.shutdownNow();
    for (SocketChannel c : slow) {
      c.close();
    }
  }

  @Test
  void tricklingClientsDelayNoOneAndAreCutOnceTheirRequestTakesLongerThanTheTimeout() throws Exception {
    int port = loopback.server().httpPort();
    for (int i = 0; i < SLOW; i++) {
      SocketChannel c = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      c.configureBlocking(false);
      String start = i % 2 == 0
          ? "GET /nacos/v1/ns/operator/metrics HTTP/1.1\r\nHost: roster\r\nX-Slow: "
          : "POST /nacos/v1/ns/instance HTTP/1.1\r\nHost: roster\r\nContent-Type: application/x-www-form-urlencoded\r\n"
              + "Content-Length: 1000\r\n\r\nserviceName=";
      c.write(ByteBuffer.wrap(start.getBytes(StandardCharsets.US_ASCII)));
      slow.add(c);
    }
    Set<SocketChannel> cut = ConcurrentHashMap.newKeySet();
    trickle.scheduleAtFixedRate(() -> {
      for (SocketChannel c : slow) {
        if (!cut.contains(c) && closedByServer(c)) {
          cut.add(c);
        }
      }
    }, 0, 200, TimeUnit.MILLISECONDS);

    HttpClient http = HttpClient.newBuilder().connectTimeout(TestTime.seconds(5)).build();
    HttpRequest metrics = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/nacos/v1/ns/operator/metrics"))
        .timeout(TestTime.seconds(5)).build();
    for (int i = 0; i < 20; i++) {
      assertThat(http.send(metrics, BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    }
    TestSession session = loopback.open().hello("beside-the-slow-ones");
    assertThat(session.register("orders", "10.0.0.1", 80).getOk()).isTrue();

    await().atMost(TestTime.seconds(15)).until(() -> cut.size() == SLOW);
    assertThat(http.send(metrics, BodyHandlers.ofString()).statusCode()).isEqualTo(200);
  }

  /** Sends one more byte and reads what came back: whether the server has closed the connection. */
  private static boolean closedByServer(SocketChannel c) {
    try {
      c.write(ByteBuffer.wrap(new byte[] {'a'}));
      return c.read(ByteBuffer.allocate(4096)) < 0;
    } catch (IOException e) {
      return true;
    }
  }
}
