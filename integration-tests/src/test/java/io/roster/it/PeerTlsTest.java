package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.client.Instance;
import io.roster.client.RosterClient;
import io.roster.proto.cluster.v1.Batch;
import io.roster.proto.cluster.v1.Command;
import io.roster.proto.cluster.v1.Owner;
import io.roster.proto.cluster.v1.OwnerKind;
import io.roster.proto.cluster.v1.Register;
import io.roster.proto.cluster.v1.ServiceKey;
import io.roster.proto.v1.MemberInfo;
import io.roster.server.testing.process.LocalCluster;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerLauncher;
import io.roster.server.testing.process.ServerProcess;
import io.roster.server.tls.Pki;
import java.io.IOException;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcFactory;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The peer port takes only members (decision 63). Three real members with mutual TLS on their
 * peer ports; this test process is the intruder: it has the jar, the group id and every member's
 * peer address, as Ratis clients of its own, but no certificate of the cluster's CA (none, or one
 * of another CA). Whatever it asks is refused and nothing of it reaches any member's registry or
 * the group; a server started as a member with another CA's certificate never joins; a member
 * with no peer TLS refuses to start, and one with {@code --peer-tls off} starts, warns, and takes
 * the same intruder's log entry (which shows the refusals above are TLS's doing).
 */
class PeerTlsTest {

  private static final String SERVICE = "intruder-svc";
  /** How a Ratis client's call fails on a connection that TLS refused (its admin calls throw gRPC's own). */
  private static final Class<?>[] REFUSED = {IOException.class,
      org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException.class};

  @RegisterExtension
  final LocalClusterExtension local = new LocalClusterExtension();

  @TempDir
  Path tmp;

  /**
   * An intruder's Ratis client: {@code tls} null for plaintext. It tries each request four times
   * (across the three members, to find the leader), as a member's own client does, so that a
   * refusal is the transport's and not a follower's "not the leader"; the last test shows that
   * this client, without TLS in the way, gets its entry in.
   */
  private static RaftClient intruder(RaftGroup group, GrpcTlsConfig tls) {
    RaftProperties props = new RaftProperties();
    RaftClientConfigKeys.Rpc.setRequestTimeout(props, TimeDuration.valueOf(3, TimeUnit.SECONDS));
    Parameters parameters = new Parameters();
    if (tls != null) {
      GrpcConfigKeys.TLS.setConf(parameters, tls);
    }
    ClientId id = ClientId.randomId();
    return RaftClient.newBuilder().setProperties(props).setRaftGroup(group).setClientId(id)
        .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(3,
            TimeDuration.valueOf(200, TimeUnit.MILLISECONDS)))
        .setClientRpc(new GrpcFactory(parameters).newRaftClientRpc(id, props)).build();
  }

  /**
   * A log entry as a member's sessions write one: an instance of {@link #SERVICE} registered under
   * member 0's current incarnation (read from Admin/ListMembers), so that every member would apply
   * it (decision 62 admits only owners of a member incarnation the log knows).
   */
  private static Message intrusion(LocalCluster cluster) {
    MemberInfo m0 = cluster.members(0).getMembersList().stream().filter(MemberInfo::getSelf).findFirst().orElseThrow();
    Command register = Command.newBuilder().setRegister(Register.newBuilder()
        .setOwner(Owner.newBuilder().setNode(m0.getId() + "@" + m0.getIncarnation())
            .setKind(OwnerKind.OWNER_KIND_SESSION).setId("intruder-session"))
        .setService(ServiceKey.newBuilder().setNamespace("public").setGroup("DEFAULT_GROUP").setName(SERVICE))
        .setInstance(io.roster.proto.cluster.v1.Instance.newBuilder().setIp("10.66.6.6").setPort(6666)
            .setWeight(1.0).setHealthy(true).setEnabled(true).setEphemeral(true).setCluster("DEFAULT"))
        .setClientId("intruder").setSessionSeq(1))
        .build();
    Batch batch = Batch.newBuilder().setOrigin("intruder").setSequence(1).setIncarnation("intruder")
        .setTimeMicros(System.currentTimeMillis() * 1000).setFormat(1).addCommands(register).build();
    return Message.valueOf(ByteString.copyFrom(batch.toByteArray()));
  }

  @Test
  void aProcessWithoutACertificateOfTheClustersCaCanNeitherWriteNorReadNorChangeTheGroup() throws Exception {
    LocalCluster cluster = local.start();
    RaftGroup group = cluster.raftGroup();
    Message intrusion = intrusion(cluster);
    Pki.Issued stranger = Pki.newAuthority("another-ca").issue("intruder", List.of("127.0.0.1"));
    List<X509Certificate> clusterCa = List.of(cluster.authority().certificate());
    Map<String, GrpcTlsConfig> intruders = new LinkedHashMap<>();
    intruders.put("plaintext", null);
    intruders.put("TLS without a certificate", new GrpcTlsConfig(null, null, clusterCa, false));
    intruders.put("a certificate of another CA", new GrpcTlsConfig(stranger.privateKey(), stranger.certificate(),
        clusterCa, true));
    List<RaftPeer> peers = List.copyOf(group.getPeers());
    List<RaftPeer> withIntruder = new ArrayList<>(peers);
    withIntruder.add(RaftPeer.newBuilder().setId("intruder").setAddress("127.0.0.1:" + Ports.free()).build());

    for (Map.Entry<String, GrpcTlsConfig> e : intruders.entrySet()) {
      String who = e.getKey();
      try (RaftClient c = intruder(group, e.getValue())) {
        assertThatThrownBy(() -> c.io().send(intrusion)).as("%s writes a log entry", who)
            .isInstanceOfAny(REFUSED);
        assertThatThrownBy(() -> c.io().sendReadOnly(Message.EMPTY)).as("%s reads", who)
            .isInstanceOfAny(REFUSED);
        for (RaftPeer p : group.getPeers()) {
          assertThatThrownBy(() -> c.getGroupManagementApi(p.getId()).info(group.getGroupId()))
              .as("%s reads %s's group info", who, p.getId()).isInstanceOfAny(REFUSED);
        }
        assertThatThrownBy(() -> c.admin().setConfiguration(withIntruder)).as("%s joins the group", who)
            .isInstanceOfAny(REFUSED);
        assertThatThrownBy(() -> c.admin().setConfiguration(peers.subList(0, 1)))
            .as("%s shrinks the group", who).isInstanceOfAny(REFUSED);
        RaftPeerId peer1 = peers.get(1).getId();
        assertThatThrownBy(() -> c.admin().transferLeadership(peer1, 2000)).as("%s moves the lead", who)
            .isInstanceOfAny(REFUSED);
        assertThatThrownBy(() -> c.getSnapshotManagementApi(peer1).create(2000)).as("%s asks for a snapshot", who)
            .isInstanceOfAny(REFUSED);
      }
    }

    // Refused aloud: a member says it refused a connection without a member's certificate.
    await("a member saying it refused the intruder").atMost(Timing.seconds(30)).pollInterval(Duration.ofMillis(200))
        .until(() -> java.util.stream.IntStream.range(0, cluster.size())
            .anyMatch(i -> cluster.node(i).output().contains("Refused a connection to the peer port: ")));

    // Nothing of it anywhere: each member answers, without the intruder's instance.
    RosterClient provider = local.closing(RosterClient.builder().serverAddresses(cluster.address(1))
        .clientName("member-client").requestTimeout(Timing.seconds(10)).build());
    provider.registerInstance(SERVICE, Instance.of("10.0.0.1", 8080));
    await("a registration through a member on every member").atMost(Timing.seconds(20))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> cluster.views(SERVICE).stream().allMatch(v -> List.of("10.0.0.1:8080").equals(v)));
    // ... and the group is the three members still, as a client with a member's certificate reads it.
    try (RaftClient trusted = RaftClient.newBuilder().setProperties(new RaftProperties()).setRaftGroup(group)
        .setRetryPolicy(RetryPolicies.noRetry())
        .setClientRpc(new GrpcFactory(cluster.memberParameters()).newRaftClientRpc(ClientId.randomId(),
            new RaftProperties())).build()) {
      for (RaftPeer p : group.getPeers()) {
        assertThat(trusted.getGroupManagementApi(p.getId()).info(group.getGroupId()).getGroup().getPeers())
            .as("%s's group", p.getId()).containsExactlyInAnyOrderElementsOf(group.getPeers());
      }
    }
    for (int i = 0; i < cluster.size(); i++) {
      assertThat(cluster.members(i).getMembersList()).extracting(MemberInfo::getId)
          .containsExactlyInAnyOrder(cluster.id(0), cluster.id(1), cluster.id(2));
    }
  }

  @Test
  void aServerWithTheCertificateOfAnotherCaCannotJoinAsAMember() throws Exception {
    LocalCluster cluster = local.start();
    cluster.node(2).kill9();
    // An impostor in member 2's place (its id, address and ports, a fresh data directory) with a
    // certificate for the same address from another CA, which it also trusts.
    Path pki = tmp.resolve("other-pki");
    Pki.Authority other = Pki.newAuthority("another-ca");
    other.writeCertificatePem(pki.resolve("ca.crt"));
    other.issue("node3", List.of(cluster.hosts.get(2), "127.0.0.1"))
        .writePem(pki.resolve("node3.crt"), pki.resolve("node3.key"));
    ServerProcess impostor = local.closing(ServerLauncher.forTests().launch("peer-tls-impostor",
        cluster.hosts.get(2), cluster.ports.get(2), List.of(), List.of("--peer-port",
            Integer.toString(cluster.peerPorts.get(2)), "--members", cluster.memberList(), "--node-id",
            cluster.hosts.get(2), "--data-dir", tmp.resolve("impostor-data").toString(),
            "--peer-tls-cert", pki.resolve("node3.crt").toString(), "--peer-tls-key", pki.resolve("node3.key").toString(),
            "--peer-tls-ca", pki.resolve("ca.crt").toString())));

    // The members' leader reaches the impostor's peer port and refuses its certificate, saying so.
    String refusal = "Refused the peer at " + cluster.hosts.get(2) + ":" + cluster.peerPorts.get(2)
        + ": the certificate CN=node3 issued by CN=another-ca is not signed by the cluster's CA";
    await("a member refusing the impostor's certificate").atMost(Timing.seconds(60))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> cluster.node(0).output().contains(refusal) || cluster.node(1).output().contains(refusal));
    await("the impostor saying why it cannot take part").atMost(Timing.seconds(60))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> impostor.output().contains("is not signed by the cluster's CA in " + pki.resolve("ca.crt")));
    RosterClient provider = local.closing(RosterClient.builder().serverAddresses(cluster.address(0))
        .clientName("member-client").requestTimeout(Timing.seconds(10)).build());
    provider.registerInstance(SERVICE, Instance.of("10.0.0.2", 8080));
    await("the registration on members 0 and 1").atMost(Timing.seconds(20)).pollInterval(Duration.ofMillis(100))
        .until(() -> List.of("10.0.0.2:8080").equals(cluster.view(1, SERVICE)));

    assertThat(impostor.isAlive()).isTrue();
    assertThat(health(cluster.hosts.get(2), cluster.ports.get(2))).as("the impostor's health")
        .isEqualTo(ServingStatus.NOT_SERVING);
    for (int i = 0; i < 2; i++) {
      assertThat(cluster.members(i).getMembersList()).filteredOn(m -> m.getId().equals(cluster.id(2)))
          .extracting(MemberInfo::getIncarnation).as("member 2's incarnation as member %d's log knows it", i)
          .doesNotContain(incarnation(impostor));
    }
  }

  @Test
  void aMemberWithoutPeerTlsRefusesToStartAndOneWithPeerTlsOffStartsAndWarns() throws Exception {
    int peerPort = Ports.free();
    ServerProcess bare = local.closing(ServerLauncher.forTests().launch("peer-tls-none", "127.0.0.1", Ports.free(),
        List.of(), List.of("--peer-port", Integer.toString(peerPort), "--members", "127.0.0.1:" + peerPort,
            "--data-dir", tmp.resolve("bare").toString())));
    assertThat(bare.process.waitFor(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    assertThat(bare.process.exitValue()).isEqualTo(2);
    assertThat(bare.output()).contains("give --peer-tls-cert, --peer-tls-key and --peer-tls-ca")
        .contains("or --peer-tls off");

    // A wrong file: the option, the path and what is wrong.
    Pki.Authority ca = Pki.newAuthority("ca");
    ca.writeCertificatePem(tmp.resolve("ca.crt"));
    ca.issue("a", List.of("127.0.0.1")).writePem(tmp.resolve("a.crt"), tmp.resolve("a.key"));
    ca.issue("b", List.of("127.0.0.1")).writePem(tmp.resolve("b.crt"), tmp.resolve("b.key"));
    ServerProcess wrongKey = local.closing(ServerLauncher.forTests().launch("peer-tls-wrong-key", "127.0.0.1",
        Ports.free(), List.of(), List.of("--peer-port", Integer.toString(peerPort), "--members",
            "127.0.0.1:" + peerPort, "--data-dir", tmp.resolve("wrong").toString(),
            "--peer-tls-cert", tmp.resolve("a.crt").toString(), "--peer-tls-key", tmp.resolve("b.key").toString(),
            "--peer-tls-ca", tmp.resolve("ca.crt").toString())));
    assertThat(wrongKey.process.waitFor(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    assertThat(wrongKey.process.exitValue()).isEqualTo(2);
    assertThat(wrongKey.output()).contains("--peer-tls-key: " + tmp.resolve("b.key")
        + " is not the private key of the certificate in " + tmp.resolve("a.crt"));

    // Off, said outright: the cluster starts, each member warns once, and the intruder's entries
    // of the first test are now taken by the log; every member drops them, saying so, since they
    // come from no member incarnation the log knows (a persistent instance as much as a session's).
    LocalCluster cluster = local.startWithoutPeerTls();
    for (int i = 0; i < cluster.size(); i++) {
      assertThat(cluster.node(i).output().split("--peer-tls off: the peer port", -1)).as("member %d's warnings", i)
          .hasSize(2);
    }
    RaftGroup group = cluster.raftGroup();
    try (RaftClient c = intruder(group, null)) {
      assertThat(c.io().send(intrusion(cluster)).isSuccess()).isTrue();
      assertThat(c.io().send(persistentIntrusion()).isSuccess()).isTrue();
      for (RaftPeer p : group.getPeers()) {
        assertThat(c.getGroupManagementApi(p.getId()).info(group.getGroupId()).getGroup().getPeers())
            .containsExactlyInAnyOrderElementsOf(group.getPeers());
      }
    }
    // A member's own registration, after them in the log: once every member has it, every member
    // has applied (or dropped) the intruder's entries.
    RosterClient provider = local.closing(RosterClient.builder().serverAddresses(cluster.address(1))
        .clientName("member-client").requestTimeout(Timing.seconds(10)).build());
    provider.registerInstance(SERVICE, Instance.of("10.0.0.1", 8080));
    await("a member's registration on every member").atMost(Timing.seconds(20)).pollInterval(Duration.ofMillis(100))
        .until(() -> cluster.views(SERVICE).stream().allMatch(v -> List.of("10.0.0.1:8080").equals(v)));
    for (int i = 0; i < cluster.size(); i++) {
      assertThat(cluster.view(i, "intruder-db")).as("member %d's intruder-db", i).isEmpty();
      assertThat(cluster.node(i).output()).as("member %d's log", i)
          .contains("it claims to come from member \"intruder\" incarnation \"intruder\"")
          .contains("it claims to come from member \"intruder\" incarnation \"1\"");
    }
  }

  /** A persistent instance, which has no member owner, in an entry that claims member "intruder", incarnation "1". */
  private static Message persistentIntrusion() {
    Command register = Command.newBuilder().setRegister(Register.newBuilder()
        .setOwner(Owner.newBuilder().setKind(OwnerKind.OWNER_KIND_PERSISTENT).setId("persistent"))
        .setService(ServiceKey.newBuilder().setNamespace("public").setGroup("DEFAULT_GROUP").setName("intruder-db"))
        .setInstance(io.roster.proto.cluster.v1.Instance.newBuilder().setIp("127.0.0.67").setPort(21998)
            .setWeight(1.0).setHealthy(true).setEnabled(true).setEphemeral(false).setCluster("DEFAULT"))
        .setIdentity("ops").setAdmin(true))
        .build();
    Batch batch = Batch.newBuilder().setOrigin("intruder").setSequence(1).setIncarnation("1")
        .setTimeMicros(System.currentTimeMillis() * 1000).setFormat(3).addCommands(register).build();
    return Message.valueOf(ByteString.copyFrom(batch.toByteArray()));
  }

  /** The incarnation a server logged at start ("... (incarnation X) started ..."), or "". */
  private static String incarnation(ServerProcess p) {
    Matcher m = Pattern.compile("\\(incarnation ([^)]+)\\) started").matcher(p.output());
    return m.find() ? m.group(1) : "";
  }

  private static ServingStatus health(String host, int port) {
    ManagedChannel ch = NettyChannelBuilder.forAddress(host, port).usePlaintext().build();
    try {
      return HealthGrpc.newBlockingStub(ch).withDeadlineAfter(5, TimeUnit.SECONDS)
          .check(HealthCheckRequest.getDefaultInstance()).getStatus();
    } finally {
      ch.shutdownNow();
    }
  }

}
