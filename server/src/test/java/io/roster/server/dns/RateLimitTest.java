package io.roster.server.dns;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.dns.RateLimit.Verdict;
import io.roster.server.time.FakeScheduler;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The per-prefix token buckets of {@code --dns-rate-limit}, on a fake clock. */
class RateLimitTest {

  private final FakeScheduler clock = new FakeScheduler();
  private final RateLimit limit = new RateLimit(3, clock::nanoTime);

  @Test
  void aPrefixGetsItsRateThenEverySecondResponseSlipsAndTheOthersDrop() throws Exception {
    List<Verdict> verdicts = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      verdicts.add(limit.admit(InetAddress.getByName("10.0.0." + (i + 1)))); // one /24
    }
    assertThat(verdicts).containsExactly(Verdict.ANSWER, Verdict.ANSWER, Verdict.ANSWER,
        Verdict.SLIP, Verdict.DROP, Verdict.SLIP, Verdict.DROP);
    // Another /24 has a bucket of its own.
    assertThat(limit.admit(InetAddress.getByName("10.0.1.1"))).isEqualTo(Verdict.ANSWER);
    // A third of a second later, one more token.
    clock.advance(Duration.ofMillis(334));
    assertThat(limit.admit(InetAddress.getByName("10.0.0.9"))).isEqualTo(Verdict.ANSWER);
    assertThat(limit.admit(InetAddress.getByName("10.0.0.9"))).isNotEqualTo(Verdict.ANSWER);
    // After a long silence the bucket is full again, never more.
    clock.advance(Duration.ofMinutes(5));
    for (int i = 0; i < 3; i++) {
      assertThat(limit.admit(InetAddress.getByName("10.0.0.1"))).isEqualTo(Verdict.ANSWER);
    }
    assertThat(limit.admit(InetAddress.getByName("10.0.0.1"))).isEqualTo(Verdict.SLIP);
  }

  @Test
  void ipv6SourcesShareA56AndIpv4NeverMeetsIpv6() throws Exception {
    for (int i = 0; i < 3; i++) {
      assertThat(limit.admit(InetAddress.getByName("2001:db8:0:ff" + i + "::1"))).isEqualTo(Verdict.ANSWER);
    }
    assertThat(limit.admit(InetAddress.getByName("2001:db8:0:fff::2"))).isEqualTo(Verdict.SLIP);
    assertThat(limit.admit(InetAddress.getByName("2001:db8:0:100::1"))).isEqualTo(Verdict.ANSWER); // another /56
    assertThat(RateLimit.prefix(InetAddress.getByName("0.0.0.1")))
        .isNotEqualTo(RateLimit.prefix(InetAddress.getByName("::2")));
    assertThat(RateLimit.prefix(InetAddress.getByName("192.0.2.1")))
        .isEqualTo(RateLimit.prefix(InetAddress.getByName("192.0.2.254")));
  }
}
