package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.roster.proto.v1.BatchRegisterInstances;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.GetServiceRequest;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.ServiceInfo;
import io.roster.proto.v1.Subscribe;
import io.roster.proto.v1.WatchRequest;
import io.roster.server.RosterServer;
import io.roster.server.model.ServiceKey;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.StreamRecorder;
import io.roster.server.testing.TcpProxy;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** docs/protocol.md "Keepalive", the parts SilentPeerTest leaves out, over loopback. */
class KeepaliveTest {

  /** Each test starts the server with the keepalive settings it is about. */
  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults().startedByTest();

  private RosterServer server;

  private void start(Duration keepaliveTime, Duration keepaliveTimeout) {
    server = loopback.start(b -> b.keepaliveTime(keepaliveTime).keepaliveTimeout(keepaliveTimeout));
  }

  /**
   * A client that stops reading: its own push (over a megabyte) fills the HTTP/2 window, the
   * server stops reading its frames, and the client's silence is not held against it for as
   * long as that lasts. Once it reads again, the rule applies again and its silence ends it.
   */
  @Test
  void silenceIsNotCountedWhileFlowControlHoldsTheStream() throws Exception {
    Duration time = TestTime.millis(300);
    Duration timeout = TestTime.millis(300);
    start(time, timeout);
    TestSession out = loopback.open(loopback.channel(), 3); // welcome and two results, then no more
    out.autoAck(false);
    out.send(ClientFrame.newBuilder().setRequestId("1").setHello(Hello.newBuilder().setClientId("stuck")).build());
    out.send(ClientFrame.newBuilder().setRequestId("2").setBatchRegister(bigState("held")).build());
    out.send(ClientFrame.newBuilder().setRequestId("3").setSubscribe(Subscribe.newBuilder()
        .setService(TestSession.key("held"))).build());
    List<ServerFrame> frames = new ArrayList<>();
    await().atMost(TestTime.seconds(10)).until(() -> {
      frames.addAll(out.drainFrames());
      return frames.size() == 3;
    });
    assertThat(frames).allMatch(f -> f.hasWelcome() || f.getResult().getOk());

    Duration limit = time.plus(timeout);
    await().during(limit.multipliedBy(3)).atMost(limit.multipliedBy(5)).until(() -> !out.closed().isDone());
    assertThat(server.registry().snapshot(ServiceKey.of("", "", "held")).instances()).hasSize(80);

    out.request(100); // reads the push: the server reads again, and the silence counts again
    Status status = out.awaitClosed();
    assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(status.getDescription()).startsWith("no frame from the client for");
    assertThat(out.drainFrames()).anyMatch(ServerFrame::hasPush);
  }

  private static BatchRegisterInstances bigState(String service) {
    BatchRegisterInstances.Builder big = BatchRegisterInstances.newBuilder().setService(TestSession.key(service));
    String value = "v".repeat(1000);
    for (int i = 0; i < 80; i++) {
      Instance.Builder b = Instance.newBuilder().setIp("10.2.0." + i).setPort(80);
      for (int m = 0; m < 15; m++) {
        b.putMetadata("k" + m, value);
      }
      big.addInstances(b);
    }
    return big.build();
  }

  /** HTTP/2 PINGs faster than every second are answered with GOAWAY ENHANCE_YOUR_CALM. */
  @Test
  void pingingTooOftenGetsTooManyPings() throws Exception {
    start(Duration.ofSeconds(4), Duration.ofSeconds(5));
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      socket.setSoTimeout((int) TestTime.seconds(10).toMillis());
      OutputStream out = socket.getOutputStream();
      out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      out.write(frameHeader(0, 0x4, 0)); // SETTINGS, empty
      for (int i = 0; i < 5; i++) {
        out.write(frameHeader(8, 0x6, 0)); // PING, no call open
        out.write(new byte[] {0, 0, 0, 0, 0, 0, 0, (byte) i});
      }
      out.flush();

      DataInputStream in = new DataInputStream(socket.getInputStream());
      while (true) {
        int length = (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
        int type = in.readUnsignedByte();
        in.readUnsignedByte(); // flags
        in.readInt(); // stream id
        byte[] payload = in.readNBytes(length);
        if (type == 0x7) { // GOAWAY: last stream id, error code, debug data
          int errorCode = ((payload[4] & 0xff) << 24) | ((payload[5] & 0xff) << 16) | ((payload[6] & 0xff) << 8)
              | (payload[7] & 0xff);
          assertThat(errorCode).as("ENHANCE_YOUR_CALM").isEqualTo(0xb);
          assertThat(new String(Arrays.copyOfRange(payload, 8, payload.length), StandardCharsets.US_ASCII))
              .isEqualTo("too_many_pings");
          return;
        }
      }
    } catch (EOFException e) {
      throw new AssertionError("the connection closed without GOAWAY too_many_pings", e);
    }
  }

  /**
   * HTTP/2 PINGs once a second are allowed, also with no call open (the SDK's channels ping
   * every 10 s; gRPC's own default would allow one in 5 minutes and answer GOAWAY).
   */
  @Test
  void pingingOnceASecondWithoutCallsIsAllowed() throws Exception {
    start(Duration.ofSeconds(4), Duration.ofSeconds(5));
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      socket.setSoTimeout((int) TestTime.seconds(10).toMillis());
      OutputStream out = socket.getOutputStream();
      out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      out.write(frameHeader(0, 0x4, 0));
      out.flush();
      DataInputStream in = new DataInputStream(socket.getInputStream());
      int pings = 4; // more than the two strikes gRPC forgives
      long lastPingNanos = System.nanoTime();
      for (int i = 0; i < pings; i++) {
        // The stimulus's pace: the next ping once a little over the permitted second has passed.
        long previous = lastPingNanos;
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
            .until(() -> System.nanoTime() - previous >= PING_PACE.toNanos());
        lastPingNanos = System.nanoTime();
        out.write(frameHeader(8, 0x6, 0));
        out.write(new byte[] {0, 0, 0, 0, 0, 0, 0, (byte) i});
        out.flush();
        while (true) {
          int length = (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
          int type = in.readUnsignedByte();
          int flags = in.readUnsignedByte();
          in.readInt();
          byte[] payload = in.readNBytes(length);
          assertThat(type).as("no GOAWAY").isNotEqualTo(0x7);
          if (type == 0x6 && (flags & 0x1) != 0 && payload[7] == (byte) i) {
            break; // our ping's ACK
          }
        }
      }
    }
  }

  /** A little over the one second between pings that the server permits. */
  private static final Duration PING_PACE = Duration.ofMillis(1_150);

  private static byte[] frameHeader(int length, int type, int flags) {
    return new byte[] {(byte) (length >>> 16), (byte) (length >>> 8), (byte) length, (byte) type, (byte) flags,
        0, 0, 0, 0};
  }

  /**
   * A watcher that goes silent without a reset (the proxy freezes): Watch calls have no frames
   * to send, so HTTP/2 keepalive is what notices. The server pings an idle transport after
   * 10 s (gRPC's floor; the configured 4 s is raised), and closes it when the ping is not
   * answered within the keepalive timeout; the Watch ends with it.
   */
  @Test
  void http2KeepaliveClosesASilentTransportAndEndsItsWatch() throws Exception {
    start(Duration.ofSeconds(4), TestTime.seconds(1));
    ManagedChannel direct = loopback.channel();
    try (TcpProxy proxy = new TcpProxy(server.port(), false)) {
      ManagedChannel channel = loopback.channelTo(proxy.address());
      StreamRecorder<ServiceInfo> watched = new StreamRecorder<>();
      RegistryGrpc.newStub(channel).watch(WatchRequest.newBuilder().setService(TestSession.key("watched")).build(),
          watched);
      await().atMost(TestTime.seconds(10)).until(() -> watched.values().size() == 1);
      GetServiceRequest get = GetServiceRequest.newBuilder().setService(TestSession.key("watched")).build();
      var registry = RegistryGrpc.newBlockingStub(direct);
      assertThat(registry.withDeadlineAfter(TestTime.seconds(5).toMillis(), TimeUnit.MILLISECONDS).getService(get).getSubscriberCount()).isEqualTo(1);
      long frozenAt = System.nanoTime();

      proxy.freeze();

      // No instances and no subscribers left: NOT_FOUND.
      await().atMost(TestTime.seconds(25)).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
          assertThatThrownBy(() -> registry.withDeadlineAfter(TestTime.seconds(5).toMillis(), TimeUnit.MILLISECONDS).getService(get))
              .isInstanceOfSatisfying(StatusRuntimeException.class,
                  e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND)));
      assertThat(Duration.ofNanos(System.nanoTime() - frozenAt)).as("a ping after an idle time, not at once")
          .isGreaterThan(Duration.ofSeconds(5));
    }
  }
}
