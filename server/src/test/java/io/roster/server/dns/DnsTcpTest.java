package io.roster.server.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import io.roster.server.session.RequestCounters;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.SimpleResolver;
import org.xbill.DNS.Type;

/**
 * DNS over TCP on its event loop (DnsTcp), over real sockets: idle connections and a client that
 * sends a byte at a time keep no real query out, the trickling client is closed, and beyond the
 * bound on connections the one idle longest makes room.
 */
class DnsTcpTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.with(b -> b.dnsPort(0).warmUp(Duration.ZERO)).startedByTest();

  private final List<Socket> sockets = new ArrayList<>();

  @AfterEach
  void closeSockets() throws IOException {
    for (Socket s : sockets) {
      s.close();
    }
  }

  @Test
  void twoHundredIdleConnectionsAndATricklingOneKeepNoQueryOut() throws Exception {
    loopback.start();
    TestSession provider = loopback.session("provider");
    assertThat(provider.register("orders", "10.0.0.1", 8080).getOk()).isTrue();
    int port = loopback.server().dnsPort();
    for (int i = 0; i < 200; i++) {
      sockets.add(connect(port));
    }
    Socket trickling = connect(port);
    OutputStream drip = trickling.getOutputStream();
    drip.write(new byte[] {0, 64}); // a 64-byte query is coming, a byte at a time

    // A real query over TCP, answered on a fresh connection beside all of them.
    Message answer = await().atMost(TestTime.seconds(10))
        .until(() -> askTcp(port, "orders.roster."), m -> m.getRcode() == Rcode.NOERROR);
    assertThat(answer.getSection(Section.ANSWER)).extracting(r -> ((ARecord) r).getAddress().getHostAddress())
        .containsExactly("10.0.0.1");

    // The trickling client is closed while it still trickles (a byte every 100 ms), long before
    // its query could be whole: a write fails once the server has closed its end.
    await().atMost(TestTime.seconds(15)).pollInterval(Duration.ofMillis(100)).until(() -> {
      try {
        drip.write(1);
        drip.flush();
        return false;
      } catch (IOException e) {
        return true;
      }
    });
    // TCP still answers.
    assertThat(askTcp(port, "orders.roster.").getRcode()).isEqualTo(Rcode.NOERROR);
  }

  @Test
  void beyondTheBoundTheConnectionIdleLongestIsClosed() throws Exception {
    Registry registry = new Registry(() -> 1L);
    DnsAnswers answers = new DnsAnswers(registry, Duration.ofSeconds(5), () -> true, Readiness.ready());
    try (DnsServer server = DnsServer.start("127.0.0.1", 0, answers, new RequestCounters(), System::nanoTime, 0, 4)) {
      int port = server.port();
      Socket oldest = connect(port);
      for (int i = 0; i < 3; i++) {
        connect(port);
      }
      // The first query made a fifth connection: the oldest idle one is closed to make room.
      assertThat(askTcp(port, "nothing.roster.").getRcode()).isEqualTo(Rcode.NXDOMAIN);
      oldest.setSoTimeout((int) TestTime.seconds(10).toMillis());
      InputStream in = oldest.getInputStream();
      assertThat(readOrTimeout(in)).isEqualTo(-1);
      // The others were not.
      Socket newer = sockets.get(sockets.size() - 1);
      newer.setSoTimeout(200);
      assertThat(readOrTimeout(newer.getInputStream())).isEqualTo(-2);
    }
  }

  private static int readOrTimeout(InputStream in) throws IOException {
    try {
      return in.read();
    } catch (SocketTimeoutException e) {
      return -2;
    } catch (java.net.SocketException e) {
      return -1; // reset: closed too
    }
  }

  private Socket connect(int port) throws IOException {
    Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
    sockets.add(s);
    return s;
  }

  private static Message askTcp(int port, String name) throws IOException {
    SimpleResolver resolver = new SimpleResolver(InetAddress.getLoopbackAddress());
    resolver.setPort(port);
    resolver.setTCP(true);
    resolver.setTimeout(Duration.ofSeconds(5));
    return resolver.send(Message.newQuery(Record.newRecord(Name.fromString(name), Type.A, DClass.IN)));
  }
}
