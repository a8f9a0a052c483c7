package io.roster.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** When a leader counts itself cut off ({@link Membership#leaderCutOff}); silence limit 3 s, three members unless said. */
class LeaderCutOffTest {

  private static final long SILENCE_MS = 3000;

  private static Membership.Role leader(long leaderForMs, long... followersSilentMs) {
    Map<String, Long> followers = new LinkedHashMap<>();
    for (long ms : followersSilentMs) {
      followers.put("m" + followers.size(), ms);
    }
    return Membership.Role.leader(leaderForMs, followers);
  }

  @Test
  void aLeaderJustElectedIsNotCutOffBeforeRatisListsItsFollowers() {
    // Seen in W11 after a leader's kill -9: the new leader's role, 44 ms old, listed no followers,
    // and the member asked its 103 sessions to move.
    assertThat(Membership.leaderCutOff(leader(44), 3, SILENCE_MS)).isNull();
    // Nor while one follower is the killed leader, silent since before the election.
    assertThat(Membership.leaderCutOff(leader(2_999, 100, 4_000), 3, SILENCE_MS)).isNull();
  }

  @Test
  void aLeaderHearingFromAMajorityTakesWrites() {
    assertThat(Membership.leaderCutOff(leader(60_000, 40, 9_000), 3, SILENCE_MS)).isNull();
    assertThat(Membership.leaderCutOff(leader(60_000, 3_000, 3_000), 3, SILENCE_MS)).isNull();
  }

  @Test
  void aLeaderSilentFromTheOthersForTheLimitIsCutOff() {
    assertThat(Membership.leaderCutOff(leader(60_000, 3_001, 9_000), 3, SILENCE_MS))
        .isEqualTo("this member leads but hears from only 1 of 3 members");
    // Once its election is as old as the limit, an empty follower list counts as no contact.
    assertThat(Membership.leaderCutOff(leader(3_000), 3, SILENCE_MS)).isNotNull();
    // Of five, two followers heard are three of five: a majority; one heard is not.
    assertThat(Membership.leaderCutOff(leader(60_000, 10, 10, 5_000, 5_000), 5, SILENCE_MS)).isNull();
    assertThat(Membership.leaderCutOff(leader(60_000, 10, 5_000, 5_000, 5_000), 5, SILENCE_MS)).isNotNull();
  }
}
