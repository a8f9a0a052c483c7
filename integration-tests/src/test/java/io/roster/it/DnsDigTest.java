package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.client.Instance;
import io.roster.client.RosterClient;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code dig} (Debian's bind9-dnsutils), a resolver no one here wrote, asks a real server
 * process's DNS port (docs/dns.md): A and SRV records follow an SDK client's registrations and
 * deregistrations, over UDP and TCP; names in any case, the zone's NS and a refused transfer. Skipped, saying why, where dig is absent, except in CI
 * (.ci/run installs it).
 */
class DnsDigTest {

  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
  }

  @Test
  void digSeesRegistrationsComeAndGo() throws Exception {
    Path dig = digBinary();
    int dnsPort = Ports.free();
    ServerProcess server = ServerProcess.start("127.0.0.1", Ports.free(), "--dns-port", Integer.toString(dnsPort));
    closing.add(server);
    RosterClient provider = RosterClient.builder().serverAddresses(server.address()).clientName("dig-provider")
        .drainTimeout(Duration.ZERO).requestTimeout(Timing.seconds(15)).build();
    closing.add(provider);
    provider.registerInstance("orders", Instance.of("10.7.0.1", 8080));
    provider.registerInstance("orders", Instance.of("10.7.0.2", 8081));

    assertThat(dig(dig, dnsPort, "orders.roster.", "A")).containsExactlyInAnyOrder("10.7.0.1", "10.7.0.2");
    assertThat(dig(dig, dnsPort, "_grpc._tcp.orders.roster.", "SRV"))
        .containsExactlyInAnyOrder("1 100 8080 0a070001.addr.roster.", "1 100 8081 0a070002.addr.roster.");
    assertThat(dig(dig, dnsPort, "orders.DEFAULT_GROUP.public.roster.", "A", "+tcp")).hasSize(2);

    provider.deregisterInstance("orders", Instance.of("10.7.0.1", 8080));
    await().atMost(Timing.seconds(10)).until(() -> dig(dig, dnsPort, "orders.roster.", "A").equals(List.of("10.7.0.2")));
    assertThat(dig(dig, dnsPort, "nothing.roster.", "A")).isEmpty();
    assertThat(run(dig, dnsPort, "nothing.roster.", "A")).contains("status: NXDOMAIN");

    // Names in any case; the zone's NS resolves to this server; transfers are refused.
    assertThat(dig(dig, dnsPort, "ORDERS.roster.", "A")).containsExactly("10.7.0.2");
    assertThat(run(dig, dnsPort, "ORDERS.roster.", "A")).containsPattern("(?m)^ORDERS\\.roster\\.\\s+\\d+\\s+IN\\s+A\\s+10\\.7\\.0\\.2");
    assertThat(dig(dig, dnsPort, "roster.", "NS")).containsExactly("ns.roster.");
    assertThat(dig(dig, dnsPort, "ns.roster.", "A")).containsExactly("127.0.0.1");
    assertThat(run(dig, dnsPort, "roster.", "AXFR")).contains("Transfer failed.");
    // Another opcode: NOTIMP, the question and opcode echoed (dig warns of a mismatch otherwise).
    assertThat(run(dig, dnsPort, "roster.", "SOA", "+opcode=notify")).contains("status: NOTIMP")
        .contains(";roster.").doesNotContain("mismatch");
  }

  /** dig's answers, one per line ({@code +short}). */
  private static List<String> dig(Path dig, int port, String name, String type, String... more) throws Exception {
    List<String> flags = new ArrayList<>(List.of(more));
    flags.add("+short");
    return run(dig, port, name, type, flags.toArray(String[]::new)).lines().map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith(";"))
        .toList();
  }

  private static String run(Path dig, int port, String name, String type, String... more) throws Exception {
    List<String> command = new ArrayList<>(List.of(dig.toString(), "@127.0.0.1", "-p", Integer.toString(port),
        name, type, "+time=3", "+tries=1"));
    command.addAll(List.of(more));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(String.join(" ", command) + ": " + out).isZero();
    return out;
  }

  private static Path digBinary() {
    return ExternalTools.require("dig", "ROSTER_DIG", "bind9-dnsutils", "the DNS test with dig is skipped");
  }
}
