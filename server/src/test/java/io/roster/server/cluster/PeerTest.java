package io.roster.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.config.ServerConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Where a member's peer port listens: never every interface unless {@code --peer-host} says so. */
class PeerTest {

  private static final Peer SELF = new Peer("roster1:9849", "roster1", 9849);

  private static ServerConfig config(String host, String peerHost) {
    return ServerConfig.builder().host(host).peerHost(peerHost).members(List.of("roster1:9849", "roster2:9849"))
        .peerTls(false).build();
  }

  @Test
  void thePeerPortListensOnHostWhenHostNamesOneAddress() {
    assertThat(Peer.bindHost(config("10.1.2.3", "").cluster(), "10.1.2.3", SELF)).isEqualTo("10.1.2.3");
  }

  @Test
  void withHostOnEveryInterfaceItListensWhereTheOtherMembersReachIt() {
    assertThat(Peer.bindHost(config("0.0.0.0", "").cluster(), "0.0.0.0", SELF)).isEqualTo("roster1");
    assertThat(Peer.bindHost(config("::", "").cluster(), "::", SELF)).isEqualTo("roster1");
    assertThat(Peer.bindHost(config("[::]", "").cluster(), "[::]", SELF)).isEqualTo("roster1");
  }

  @Test
  void peerHostWinsEvenForEveryInterface() {
    assertThat(Peer.bindHost(config("10.1.2.3", "10.9.9.9").cluster(), "10.1.2.3", SELF)).isEqualTo("10.9.9.9");
    assertThat(Peer.bindHost(config("10.1.2.3", "0.0.0.0").cluster(), "10.1.2.3", SELF)).isEqualTo("0.0.0.0");
  }
}
