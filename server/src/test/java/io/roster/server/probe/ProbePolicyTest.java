package io.roster.server.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.server.config.ServerConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Where probes may go (decision 81): the default, {@code --probe-allow}'s rules, and its parsing. */
class ProbePolicyTest {

  private static ProbePolicy.Blame blame(ProbePolicy p, String ip, int port) {
    ProbePolicy.Refusal r = p.refusal(ip, port);
    return r == null ? null : r.blame();
  }

  @Test
  void theDefaultRefusesLinkLocalCloudMetadataAndWhatIsNeverAnInstance() {
    ProbePolicy p = ProbePolicy.DEFAULT;
    for (String refused : new String[] {"169.254.169.254", "169.254.0.1", "::ffff:169.254.169.254", "fe80::1",
        "febf::1", "100.100.100.200", "fd00:ec2::254", "0.0.0.0", "0.1.2.3", "::", "224.0.0.1", "239.255.255.250",
        "ff02::1", "255.255.255.255", "::ffff:0.0.0.0"}) {
      assertThat(blame(p, refused, 80)).as(refused).isEqualTo(ProbePolicy.Blame.ADDRESS);
    }
    for (String allowed : new String[] {"127.0.0.1", "127.0.0.9", "::1", "10.1.2.3", "192.168.0.10", "172.16.0.1",
        "8.8.8.8", "2001:db8::1", "fd00::1", "169.253.255.255", "169.255.0.0", "fec0::1", "100.100.100.201"}) {
      assertThat(p.refusal(allowed, 80)).as(allowed).isNull();
    }
    assertThat(p.refusal("db.internal", 5432)).as("a host name is never probed, so never refused").isNull();
    assertThat(p.listed()).isFalse();
  }

  @Test
  void probeAllowListsNetworksAndPortsAndNothingElse() {
    ProbePolicy p = ProbePolicy.parse(" 10.0.0.0/8 , fd00::/8:8000-8999,192.168.1.7/32:443,169.254.0.0/16,0.0.0.0/0:1");
    assertThat(p.refusal("10.200.3.4", 22)).isNull();
    assertThat(p.refusal("fd12::1", 8080)).isNull();
    assertThat(blame(p, "fd12::1", 22)).isEqualTo(ProbePolicy.Blame.PORT);
    assertThat(p.refusal("192.168.1.7", 443)).isNull();
    assertThat(blame(p, "192.168.1.7", 444)).isEqualTo(ProbePolicy.Blame.PORT);
    assertThat(blame(p, "192.168.1.8", 444)).as("a port on an address of 0.0.0.0/0:1").isEqualTo(ProbePolicy.Blame.PORT);
    assertThat(blame(p, "127.0.0.1", 80)).as("loopback only when listed").isEqualTo(ProbePolicy.Blame.PORT);
    assertThat(blame(p, "::1", 80)).isEqualTo(ProbePolicy.Blame.ADDRESS);
    assertThat(p.refusal("169.254.169.254", 80)).as("link-local once listed").isNull();
    assertThat(blame(p, "0.0.0.0", 1)).as("never, whatever is listed").isEqualTo(ProbePolicy.Blame.ADDRESS);
    assertThat(blame(p, "224.0.0.1", 1)).isEqualTo(ProbePolicy.Blame.ADDRESS);
    assertThat(p.refusal("::1", 80).reason()).isEqualTo("not in --probe-allow 10.0.0.0/8 , fd00::/8:8000-8999,"
        + "192.168.1.7/32:443,169.254.0.0/16,0.0.0.0/0:1");
  }

  @Test
  void aBadEntryIsRefusedNamingTheFlagTheEntryAndWhatWasExpected() {
    Map<String, String> bad = Map.of(
        "10.0.0.0", "is not a CIDR block",
        "10.0.0.0/33", "has prefix length 33, not 0..32",
        "fd00::/129", "has prefix length 129, not 0..128",
        "10.0.0.1/8", "has bits set past its prefix length 8 (the network is 10.0.0.0/8)",
        "example.com/8", "does not start with an IPv4 or IPv6 address",
        "10.0.0.0/8:0", "has the port \"0\", not 1..65535",
        "10.0.0.0/8:9000-8000", "has the port range 9000-8000, whose start is above its end",
        "10.0.0.0/x", "has no prefix length 0..32 after '/'",
        "", "is not a CIDR block");
    bad.forEach((entry, why) -> assertThatThrownBy(() -> ProbePolicy.parse("192.168.0.0/16," + entry))
        .as(entry).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("--probe-allow: \"" + entry + "\" " + why)
        .hasMessageContaining("expected: CIDR[:PORT[-PORT]]"));
  }

  @Test
  void aServerGivenABadProbeAllowDoesNotStartAndSaysWhy() {
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--probe-allow", "10.0.0.0/8,10.1.0.0/33"}, Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("--probe-allow: \"10.0.0.0/8,10.1.0.0/33\" (expected: comma-separated CIDR")
        .hasRootCauseMessage("has prefix length 33, not 0..32");
    assertThat(ServerConfig.parse(new String[] {"--probe-allow", "10.0.0.0/8"}, Map.of()).probes().probeAllow().refusal(
        "127.0.0.1", 80)).isNotNull();
    assertThat(ServerConfig.parse(new String[] {}, Map.of()).probes().probeAllow()).isSameAs(ProbePolicy.DEFAULT);
  }
}
