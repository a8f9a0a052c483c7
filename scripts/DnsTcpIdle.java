// DNS over TCP beside idle connections (docs/benchmarks.md, "DNS over TCP beside 1,000 idle
// connections"): starts the DNS port in this JVM (127.0.0.1, a free port), opens N idle TCP
// connections to it, then sends Q queries over TCP, each on a fresh connection as a resolver's
// fallback does, one at a time, and prints their latency; then does the same with a client that
// sends a byte every 100 ms beside them. Run from the repository's root after a compile:
//   ./mvnw -o -q -pl server dependency:build-classpath -Dmdep.outputFile=target/cp.txt
//   java -cp server/target/classes:$(cat target/cp.txt) scripts/DnsTcpIdle.java [N] [Q]
import io.roster.server.dns.DnsAnswers;
import io.roster.server.dns.DnsServer;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import io.roster.server.session.RequestCounters;
import io.roster.server.time.SystemScheduler;
import java.net.InetAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SimpleResolver;
import org.xbill.DNS.Type;

public class DnsTcpIdle {
  public static void main(String[] args) throws Exception {
    int idle = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    int queries = args.length > 1 ? Integer.parseInt(args[1]) : 200;
    SystemScheduler clock = new SystemScheduler("bench", 1);
    Registry registry = new Registry(clock::currentTimeMillis);
    DnsAnswers answers = new DnsAnswers(registry, Duration.ofSeconds(5), () -> true, Readiness.ready());
    try (DnsServer server = DnsServer.start("127.0.0.1", 0, answers, new RequestCounters(), clock, 0)) {
      int port = server.port();
      measure(port, queries, "warm-up, no idle connection");
      measure(port, queries, "no idle connection");
      List<Socket> held = new ArrayList<>();
      for (int i = 0; i < idle; i++) {
        held.add(new Socket(InetAddress.getLoopbackAddress(), port));
      }
      measure(port, queries, idle + " idle connections");
      Socket trickle = new Socket(InetAddress.getLoopbackAddress(), port);
      trickle.getOutputStream().write(new byte[] {0, 64});
      Thread dripper = new Thread(() -> {
        try {
          while (true) {
            Thread.sleep(100);
            trickle.getOutputStream().write(1);
          }
        } catch (Exception e) {
          System.out.println("  the trickling client was closed: " + e);
        }
      });
      dripper.start();
      measure(port, queries, idle + " idle connections and one trickling a byte every 100 ms");
      dripper.join(10_000);
      for (Socket s : held) {
        s.close();
      }
    }
    clock.close();
  }

  static void measure(int port, int n, String what) throws Exception {
    long[] micros = new long[n];
    int failed = 0;
    for (int i = 0; i < n; i++) {
      SimpleResolver r = new SimpleResolver(InetAddress.getLoopbackAddress());
      r.setPort(port);
      r.setTCP(true);
      r.setTimeout(Duration.ofSeconds(10));
      long t0 = System.nanoTime();
      try {
        Message m = r.send(Message.newQuery(Record.newRecord(Name.fromString("ns.roster."), Type.A, DClass.IN)));
        if (m.getRcode() != Rcode.NOERROR) {
          failed++;
        }
      } catch (java.io.IOException e) {
        failed++;
      }
      micros[i] = (System.nanoTime() - t0) / 1000;
    }
    Arrays.sort(micros);
    System.out.printf("%s: %d queries over TCP, p50 %.2f ms, p99 %.2f ms, max %.2f ms, failed %d%n", what, n,
        micros[n / 2] / 1000.0, micros[(int) Math.ceil(n * 0.99) - 1] / 1000.0, micros[n - 1] / 1000.0, failed);
  }
}
