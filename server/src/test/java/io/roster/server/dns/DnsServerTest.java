package io.roster.server.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.NSRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.Opcode;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.SRVRecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.SimpleResolver;
import org.xbill.DNS.Type;

/**
 * The DNS port over real UDP and TCP sockets (docs/dns.md), asked by dnsjava's own resolver:
 * A and SRV follow registrations, the short and full name forms, NXDOMAIN and REFUSED, only
 * healthy and enabled instances, an answer too large for UDP truncated there and whole over
 * TCP, names in any case, the zone's NS, and what is not served.
 */
class DnsServerTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.with(b -> b.dnsPort(0).warmUp(Duration.ZERO)).startedByTest();

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(TestTime.seconds(10)).build();

  @Test
  void addressesAndSrvRecordsFollowRegistrations() throws Exception {
    loopback.start();
    TestSession provider = loopback.session("provider");
    assertThat(provider.register("orders", "10.0.0.1", 8080).getOk()).isTrue();
    assertThat(provider.register("orders", "10.0.0.2", 8081).getOk()).isTrue();

    Message a = ask("orders.roster.", Type.A, false);
    assertThat(a.getRcode()).isEqualTo(Rcode.NOERROR);
    assertThat(a.getHeader().getFlag(Flags.AA)).isTrue();
    assertThat(addresses(a)).containsExactlyInAnyOrder("10.0.0.1", "10.0.0.2");
    assertThat(a.getSection(Section.ANSWER)).allSatisfy(r -> assertThat(r.getTTL()).isEqualTo(5));

    Message srv = ask("_grpc._tcp.orders.roster.", Type.SRV, false);
    List<SRVRecord> records = srv.getSection(Section.ANSWER).stream().map(SRVRecord.class::cast).toList();
    assertThat(records).extracting(SRVRecord::getPort).containsExactlyInAnyOrder(8080, 8081);
    assertThat(records).extracting(SRVRecord::getWeight).containsOnly(100);
    assertThat(records).extracting(r -> r.getTarget().toString())
        .containsExactlyInAnyOrder("0a000001.addr.roster.", "0a000002.addr.roster.");
    assertThat(addresses(srv, Section.ADDITIONAL)).containsExactlyInAnyOrder("10.0.0.1", "10.0.0.2");
    assertThat(addresses(ask("0a000002.addr.roster.", Type.A, false))).containsExactly("10.0.0.2");
    // The same service by its full name: service.group.namespace.roster.
    assertThat(addresses(ask("orders.DEFAULT_GROUP.public.roster.", Type.A, true))).hasSize(2);

    provider.request(io.roster.proto.v1.ClientFrame.newBuilder().setDeregister(
        io.roster.proto.v1.DeregisterInstance.newBuilder().setService(TestSession.key("orders"))
            .setInstance(io.roster.proto.v1.Instance.newBuilder().setIp("10.0.0.1").setPort(8080))));
    await().atMost(TestTime.seconds(10)).until(() -> addresses(ask("orders.roster.", Type.A, false)).size() == 1);
    assertThat(addresses(ask("orders.roster.", Type.A, false))).containsExactly("10.0.0.2");

    assertThat(loopback.server().sessions().requests()).satisfies(counters -> {
      long[] ok = new long[1];
      counters.forEachRequest((protocol, type, result, n) -> {
        if (protocol.label().equals("dns") && type.equals("A") && result.equals("ok")) {
          ok[0] = n;
        }
      });
      assertThat(ok[0]).isGreaterThanOrEqualTo(5);
    });
  }

  @Test
  void groupsNamespacesAndWhatIsNotServed() throws Exception {
    loopback.start();
    post("/nacos/v1/ns/instance?namespaceId=team&groupName=pay&serviceName=billing&ip=10.1.0.1&port=80");
    post("/nacos/v1/ns/instance?serviceName=web&ip=10.2.0.1&port=80");
    post("/nacos/v1/ns/instance?serviceName=web&ip=10.2.0.2&port=80&enabled=false");
    post("/nacos/v1/ns/instance?serviceName=web&ip=10.2.0.3&port=80&healthy=false");
    post("/nacos/v1/ns/instance?serviceName=com.example.api&groupName=pay&ip=10.3.0.1&port=80");
    post("/nacos/v1/ns/instance?serviceName=dual&ip=10.4.0.1&port=80");
    post("/nacos/v1/ns/instance?serviceName=dual&ip=fd00::1&port=80");

    assertThat(addresses(ask("billing.pay.team.roster.", Type.A, false))).containsExactly("10.1.0.1");
    assertThat(ask("billing.pay.roster.", Type.A, false).getRcode()).isEqualTo(Rcode.NXDOMAIN);
    // Only what a subscriber would be given: healthy and enabled.
    assertThat(addresses(ask("web.roster.", Type.A, false))).containsExactly("10.2.0.1");
    // A dotted service name in the full form.
    assertThat(addresses(ask("com.example.api.pay.public.roster.", Type.A, false))).containsExactly("10.3.0.1");

    Message unknown = ask("nothing-here.roster.", Type.A, false);
    assertThat(unknown.getRcode()).isEqualTo(Rcode.NXDOMAIN);
    assertThat(unknown.getSection(Section.AUTHORITY)).extracting(Record::getType).containsExactly(Type.SOA);
    Message noV6 = ask("web.roster.", Type.AAAA, false);
    assertThat(noV6.getRcode()).isEqualTo(Rcode.NOERROR);
    assertThat(noV6.getSection(Section.ANSWER)).isEmpty();
    assertThat(ask("example.com.", Type.A, false).getRcode()).isEqualTo(Rcode.REFUSED);
    // Names with names below them exist: the zone (with its SOA), a namespace, a group of one.
    Message apex = ask("roster.", Type.SOA, false);
    assertThat(apex.getRcode()).isEqualTo(Rcode.NOERROR);
    assertThat(apex.getSection(Section.ANSWER)).extracting(Record::getType).containsExactly(Type.SOA);
    assertThat(ask("team.roster.", Type.A, false).getRcode()).isEqualTo(Rcode.NOERROR);
    assertThat(ask("pay.team.roster.", Type.A, false).getRcode()).isEqualTo(Rcode.NOERROR);
    assertThat(ask("addr.roster.", Type.A, false).getRcode()).isEqualTo(Rcode.NOERROR);

    // IPv6 instances answer AAAA, and their SRV targets are 32 hex digits.
    assertThat(addresses(ask("dual.roster.", Type.A, false))).containsExactly("10.4.0.1");
    assertThat(ask("dual.roster.", Type.AAAA, false).getSection(Section.ANSWER)).extracting(
        r -> ((org.xbill.DNS.AAAARecord) r).getAddress().getHostAddress()).containsExactly("fd00:0:0:0:0:0:0:1");
    assertThat(ask("dual.roster.", Type.SRV, false).getSection(Section.ANSWER)).extracting(
        r -> ((SRVRecord) r).getTarget().toString())
        .containsExactlyInAnyOrder("0a040001.addr.roster.", "fd000000000000000000000000000001.addr.roster.");
  }

  @Test
  void anAnswerTooLargeForUdpIsTruncatedThereAndWholeOverTcp() throws Exception {
    loopback.start();
    TestSession provider = loopback.session("provider");
    for (int i = 1; i <= 100; i++) {
      assertThat(provider.register("big", "10.9." + (i / 200) + "." + i, 9000 + i).getOk()).isTrue();
    }
    // Over UDP with no EDNS: 512 bytes at most, the TC bit set.
    Message query = Message.newQuery(Record.newRecord(Name.fromString("big.roster."), Type.SRV, DClass.IN));
    Message truncated = udp(query);
    assertThat(truncated.numBytes()).isLessThanOrEqualTo(512);
    assertThat(truncated.getHeader().getFlag(Flags.TC)).isTrue();
    assertThat(truncated.getSection(Section.ANSWER).size()).isLessThan(100);

    // The resolver asks again over TCP, as real resolvers do, and gets every record.
    Message whole = ask("big.roster.", Type.SRV, false);
    assertThat(whole.getHeader().getFlag(Flags.TC)).isFalse();
    assertThat(whole.getSection(Section.ANSWER)).hasSize(100);
  }

  @Test
  void whileWarmingUpAMissingNameIsServfailNotACachedNxdomain() throws Exception {
    loopback.start(b -> b.warmUp(Duration.ofSeconds(60)));
    TestSession provider = loopback.session("provider");
    assertThat(provider.register("orders", "10.0.0.1", 8080).getOk()).isTrue();
    // What it has, it answers; what it lacks may only be missing here for now.
    assertThat(addresses(ask("orders.roster.", Type.A, false))).containsExactly("10.0.0.1");
    assertThat(ask("not-back-yet.roster.", Type.A, false).getRcode()).isEqualTo(Rcode.SERVFAIL);
  }

  @Test
  void aResponseIsNeverAnswered() throws Exception {
    loopback.start();
    Message response = Message.newQuery(Record.newRecord(Name.fromString("orders.roster."), Type.A, DClass.IN));
    response.getHeader().setFlag(Flags.QR);
    byte[] wire = response.toWire();
    try (DatagramSocket udp = new DatagramSocket()) {
      udp.setSoTimeout(300);
      udp.send(new DatagramPacket(wire, wire.length, InetAddress.getLoopbackAddress(), loopback.server().dnsPort()));
      byte[] buffer = new byte[512];
      assertThatThrownBy(() -> udp.receive(new DatagramPacket(buffer, buffer.length)))
          .isInstanceOf(java.net.SocketTimeoutException.class);
    }
    // The server still answers queries.
    assertThat(ask("nothing.roster.", Type.A, false).getRcode()).isEqualTo(Rcode.NXDOMAIN);
  }

  @Test
  void namesMatchInAnyCaseAndAnswersEchoTheQuestionsCase() throws Exception {
    loopback.start();
    post("/nacos/v1/ns/instance?serviceName=digsvc&ip=10.5.0.1&port=80");
    post("/nacos/v1/ns/instance?serviceName=Mixed&ip=10.5.0.2&port=80");
    post("/nacos/v1/ns/instance?namespaceId=team&groupName=pay&serviceName=billing&ip=10.5.0.3&port=80");

    Message upper = ask("DIGSVC.roster.", Type.A, false);
    assertThat(upper.getRcode()).isEqualTo(Rcode.NOERROR);
    assertThat(addresses(upper)).containsExactly("10.5.0.1");
    // RFC 4343: the answer's name is the question's, case and all.
    assertThat(upper.getSection(Section.ANSWER)).extracting(r -> r.getName().toString()).containsExactly("DIGSVC.roster.");
    assertThat(addresses(ask("mixed.roster.", Type.A, true))).containsExactly("10.5.0.2");
    assertThat(addresses(ask("DigSvc.Default_Group.PUBLIC.Roster.", Type.A, false))).containsExactly("10.5.0.1");
    assertThat(ask("_HTTP._TCP.DIGSVC.roster.", Type.SRV, false).getSection(Section.ANSWER)).hasSize(1);
    assertThat(addresses(ask("BILLING.PAY.TEAM.roster.", Type.A, false))).containsExactly("10.5.0.3");
    // Names above services too, and what does not exist in any case.
    assertThat(ask("TEAM.roster.", Type.A, false).getRcode()).isEqualTo(Rcode.NOERROR);
    assertThat(ask("Pay.Team.roster.", Type.A, false).getRcode()).isEqualTo(Rcode.NOERROR);
    assertThat(ask("0A050001.ADDR.ROSTER.", Type.A, false).getRcode()).isEqualTo(Rcode.NOERROR);
    assertThat(ask("NOTHING.roster.", Type.A, false).getRcode()).isEqualTo(Rcode.NXDOMAIN);
    // The exact spelling wins over another case.
    post("/nacos/v1/ns/instance?serviceName=DIGSVC&ip=10.5.0.9&port=80");
    assertThat(addresses(ask("DIGSVC.roster.", Type.A, false))).containsExactly("10.5.0.9");
    assertThat(addresses(ask("digsvc.roster.", Type.A, false))).containsExactly("10.5.0.1");
  }

  @Test
  void theApexHasAnNsRecordWhoseNameResolvesToTheServer() throws Exception {
    loopback.start();
    Message ns = ask("roster.", Type.NS, false);
    assertThat(ns.getRcode()).isEqualTo(Rcode.NOERROR);
    assertThat(ns.getSection(Section.ANSWER)).hasSize(1);
    NSRecord record = (NSRecord) ns.getSection(Section.ANSWER).get(0);
    assertThat(record.getTarget().toString()).isEqualTo("ns.roster.");
    assertThat(addresses(ns, Section.ADDITIONAL)).containsExactly("127.0.0.1");
    // The server's own address (the loopback server listens on 127.0.0.1), and the SOA names it.
    assertThat(addresses(ask("ns.roster.", Type.A, false))).containsExactly("127.0.0.1");
    assertThat(ask("ns.roster.", Type.AAAA, false).getRcode()).isEqualTo(Rcode.NOERROR);
    SOARecord soa = (SOARecord) ask("roster.", Type.SOA, false).getSection(Section.ANSWER).get(0);
    assertThat(soa.getHost()).isEqualTo(record.getTarget());
  }

  @Test
  void otherOpcodesAreNotimpWithTheQuestionAndZoneTransfersAreRefused() throws Exception {
    loopback.start();
    Message notify = Message.newQuery(Record.newRecord(Name.fromString("roster."), Type.SOA, DClass.IN));
    notify.getHeader().setOpcode(Opcode.NOTIFY);
    Message notimp = udp(notify);
    assertThat(notimp.getRcode()).isEqualTo(Rcode.NOTIMP);
    assertThat(notimp.getHeader().getID()).isEqualTo(notify.getHeader().getID());
    assertThat(notimp.getQuestion()).isEqualTo(notify.getQuestion());
    assertThat(notimp.getHeader().getOpcode()).isEqualTo(Opcode.NOTIFY);

    for (int type : new int[] {Type.AXFR, Type.IXFR}) {
      Message transfer = Message.newQuery(Record.newRecord(Name.fromString("roster."), type, DClass.IN));
      Message refused = tcp(transfer);
      assertThat(refused.getRcode()).as(Type.string(type)).isEqualTo(Rcode.REFUSED);
      assertThat(refused.getQuestion()).isEqualTo(transfer.getQuestion());
      assertThat(refused.getSection(Section.ANSWER)).isEmpty();
    }
  }

  @Test
  void overTheRateLimitUdpAnswersSlipTruncatedOrDropWhileTcpStillAnswers() throws Exception {
    loopback.start(b -> b.dnsRateLimit(1));
    post("/nacos/v1/ns/instance?serviceName=orders&ip=10.0.0.1&port=8080");
    byte[] buffer = new byte[65535];
    int answered = 0;
    int slipped = 0;
    int received = 0;
    int queryLength = 0;
    try (DatagramSocket udp = new DatagramSocket()) {
      for (int i = 0; i < 20; i++) {
        Message q = Message.newQuery(Record.newRecord(Name.fromString("orders.roster."), Type.A, DClass.IN));
        byte[] wire = q.toWire();
        queryLength = wire.length;
        udp.send(new DatagramPacket(wire, wire.length, InetAddress.getLoopbackAddress(), loopback.server().dnsPort()));
      }
      udp.setSoTimeout(1000);
      while (true) {
        DatagramPacket reply = new DatagramPacket(buffer, buffer.length);
        try {
          udp.receive(reply);
        } catch (java.net.SocketTimeoutException e) {
          break;
        }
        received++;
        Message m = new Message(java.util.Arrays.copyOf(buffer, reply.getLength()));
        if (m.getHeader().getFlag(Flags.TC)) {
          assertThat(m.getSection(Section.ANSWER)).isEmpty();
          assertThat(m.getQuestion().getName().toString()).isEqualTo("orders.roster.");
          assertThat(reply.getLength()).isLessThanOrEqualTo(queryLength); // no amplification
          slipped++;
        } else {
          answered++;
        }
      }
    }
    assertThat(answered).isBetween(1, 5);
    assertThat(slipped).isGreaterThanOrEqualTo(5);
    assertThat(received).isLessThan(20);
    // A real client told to use TCP gets its answer there: TCP is not limited.
    assertThat(addresses(ask("orders.roster.", Type.A, true))).containsExactly("10.0.0.1");
  }

  @Test
  void nsRosterIsTheBoundAddressOrForAWildcardTheMachinesOwn() throws Exception {
    InetAddress lo = InetAddress.getLoopbackAddress();
    InetAddress lan = InetAddress.getByAddress(new byte[] {(byte) 192, 0, 2, 7});
    InetAddress v6 = InetAddress.getByAddress(new byte[] {0x20, 0x01, 0x0d, (byte) 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7});
    InetAddress linkLocal = InetAddress.getByAddress(new byte[] {(byte) 0xfe, (byte) 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
    assertThat(DnsServer.ownAddresses(lan, List.of(lo, lan, v6))).containsExactly(lan);
    InetAddress any4 = InetAddress.getByAddress(new byte[4]);
    assertThat(DnsServer.ownAddresses(any4, List.of(lo, lan, linkLocal, v6))).containsExactly(lan, v6);
    assertThat(DnsServer.ownAddresses(any4, List.of(lo, linkLocal))).containsExactly(lo);
  }

  // --- helpers ---


  /** One query over UDP, raw: dnsjava's resolver would check what this test wants to see. */
  private Message udp(Message query) throws Exception {
    byte[] wire = query.toWire();
    byte[] buffer = new byte[65535];
    DatagramPacket reply = new DatagramPacket(buffer, buffer.length);
    try (DatagramSocket udp = new DatagramSocket()) {
      udp.setSoTimeout(5000);
      udp.send(new DatagramPacket(wire, wire.length, InetAddress.getLoopbackAddress(), loopback.server().dnsPort()));
      udp.receive(reply);
    }
    return new Message(java.util.Arrays.copyOf(buffer, reply.getLength()));
  }

  /** One query over TCP, raw (dnsjava's resolver takes AXFR for a transfer of its own). */
  private Message tcp(Message query) throws Exception {
    try (java.net.Socket s = new java.net.Socket(InetAddress.getLoopbackAddress(), loopback.server().dnsPort())) {
      s.setSoTimeout(5000);
      byte[] wire = query.toWire();
      java.io.DataOutputStream out = new java.io.DataOutputStream(s.getOutputStream());
      out.writeShort(wire.length);
      out.write(wire);
      out.flush();
      java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
      byte[] answer = new byte[in.readUnsignedShort()];
      in.readFully(answer);
      return new Message(answer);
    }
  }

  private Message ask(String name, int type, boolean tcp) throws Exception {
    SimpleResolver resolver = new SimpleResolver(InetAddress.getLoopbackAddress());
    resolver.setPort(loopback.server().dnsPort());
    resolver.setTCP(tcp);
    resolver.setTimeout(Duration.ofSeconds(5));
    return resolver.send(Message.newQuery(Record.newRecord(Name.fromString(name), type, DClass.IN)));
  }

  private static List<String> addresses(Message m) {
    return addresses(m, Section.ANSWER);
  }

  private static List<String> addresses(Message m, int section) {
    return m.getSection(section).stream().filter(ARecord.class::isInstance)
        .map(r -> ((ARecord) r).getAddress().getHostAddress()).collect(Collectors.toList());
  }

  private void post(String pathAndQuery) throws Exception {
    var r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + loopback.server().httpPort()
        + pathAndQuery)).POST(BodyPublishers.noBody()).build(), BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
  }
}
