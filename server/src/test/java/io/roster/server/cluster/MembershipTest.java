package io.roster.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.cluster.Membership.Role;
import io.roster.server.cluster.Membership.Member;
import io.roster.server.time.FakeScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The membership policy on a fake clock: each test pins one rule of the cluster (the decision it
 * comes from is named), and fails if the rule is taken out. Member n1 is this one; the group has
 * three members; {@code --member-down-after} is 3 s and {@code --member-grace} 10 s, as by default.
 */
class MembershipTest {

  private static final Duration DOWN_AFTER = Duration.ofSeconds(3);
  private static final Duration GRACE = Duration.ofSeconds(10);
  private static final Duration EVERY = ClusterNode.WATCH_EVERY;

  private final FakeScheduler time = new FakeScheduler();
  private final List<String> did = new ArrayList<>();
  /** What the server was told of reads (decision 86), apart from {@link #did}. */
  private final List<String> served = new ArrayList<>();
  private final Membership policy = new Membership("n1", DOWN_AFTER, GRACE, time);

  /** Writes down what a watch asked, in the order the adapter carries it out. */
  private void record(Membership.Effects effects) {
    if (effects.writable() != null) {
      String reason = effects.writable().reason();
      did.add(reason == null ? "writable" : "unwritable: " + reason);
    }
    if (effects.serving() != null) {
      String reason = effects.serving().reason();
      served.add(reason == null ? "serving" : "not serving: " + reason);
    }
    if (effects.recordReturn()) {
      did.add("return");
    }
    effects.recordDown().forEach(member -> did.add("down " + member));
    effects.endStaleOwners().forEach(e -> did.add("end " + e.member() + " keep '" + e.keepIncarnation() + "'"));
    if (effects.reportLoad() >= 0) {
      did.add("load " + effects.reportLoad());
    }
    if (effects.shed() != null) {
      did.add("shed " + effects.shed().count() + " to " + effects.shed().to());
    }
  }

  private List<Member> members = List.of(member("n1", 0), member("n2", 0), member("n3", 0));
  private Map<String, Long> stale = Map.of();
  private int sessions;
  private boolean caughtUp = true;
  private boolean inGroup = true;
  private boolean announcing;

  private static Member member(String id, int sessions) {
    return new Member(id, "inc-" + id, id + ":9848", false, sessions);
  }

  private static Member down(String id) {
    return new Member(id, "inc-" + id, id + ":9848", true, 0);
  }

  private static Role leading(long followerN2SilentMs, long followerN3SilentMs) {
    Map<String, Long> followers = new LinkedHashMap<>();
    followers.put("n2", followerN2SilentMs);
    followers.put("n3", followerN3SilentMs);
    return Role.leader(60_000, followers);
  }

  private static final Role LEADING = leading(20, 20);
  private static final Role FOLLOWING = Role.follower(20);

  /** One watch, {@link ClusterNode#WATCH_EVERY} after the last. */
  private void watch(Role role) {
    time.advance(EVERY);
    policy.tick();
    record(policy.watch(new Membership.Facts(caughtUp, inGroup, role, 3, members, stale, sessions, announcing)));
  }

  /** Watches on time for {@code d}. */
  private void watchFor(Duration d, Role role) {
    for (long n = d.toNanos() / EVERY.toNanos(); n > 0; n--) {
      watch(role);
    }
  }

  /** The first watch after catching up, at the start of the test's time. */
  private void caughtUpAndWritable(Role role) {
    record(policy.watch(new Membership.Facts(true, role, 3, members, stale, sessions, false)));
    assertThat(did).containsExactly("writable");
    did.clear();
  }

  // --- 28. A member catches up before serving; one cut off stops taking writes ---

  @Test
  void aMemberRefusesWritesUntilItHasCaughtUpThenSaysItTakesThem() {
    caughtUp = false;
    watchFor(Duration.ofSeconds(2), FOLLOWING);
    assertThat(policy.unwritable()).isEqualTo(Membership.CATCHING_UP);
    assertThat(did).isEmpty();

    caughtUp = true;
    watch(FOLLOWING);
    assertThat(policy.unwritable()).isNull();
    assertThat(did).containsExactly("writable");
  }

  // --- 86. A member that has not joined never serves ---

  @Test
  void aMemberNotInTheGroupServesNothingUntilItIsAddedAndHasCaughtUp() {
    caughtUp = false;
    inGroup = false;
    watchFor(Duration.ofSeconds(2), Role.noLeader());
    assertThat(policy.unwritable()).isEqualTo(Membership.NOT_JOINED);
    assertThat(policy.unservable()).isEqualTo(Membership.NOT_JOINED);
    assertThat(served).containsExactly("not serving: " + Membership.NOT_JOINED);
    assertThat(did).isEmpty();

    inGroup = true; // added: it catches up from the leader
    watch(FOLLOWING);
    assertThat(policy.unservable()).isEqualTo(Membership.CATCHING_UP);
    assertThat(did).isEmpty();

    caughtUp = true;
    watch(FOLLOWING);
    assertThat(policy.unservable()).isNull();
    assertThat(policy.unwritable()).isNull();
    assertThat(did).containsExactly("writable");
    assertThat(served).containsExactly("not serving: " + Membership.NOT_JOINED,
        "not serving: " + Membership.CATCHING_UP, "serving");
  }

  @Test
  void aMemberRemovedFromTheGroupStopsServingAndSendsItsSessionsAway() {
    caughtUpAndWritable(FOLLOWING);
    served.clear();
    inGroup = false;
    watch(Role.noLeader());
    assertThat(did).containsExactly("unwritable: " + Membership.REMOVED);
    assertThat(served).containsExactly("not serving: " + Membership.REMOVED);
  }

  @Test
  void aMemberThatCatchesUpWhileCutOffIsToldItCannotWrite() {
    caughtUp = false;
    watchFor(DOWN_AFTER.plus(EVERY), Role.noLeader());
    assertThat(did).isEmpty();
    caughtUp = true;
    watch(Role.noLeader());
    assertThat(did).containsExactly(
        "unwritable: this member has not heard from a leader for 3000 ms: it is cut off from the majority");
    assertThat(served).containsExactly("serving");
  }

  @Test
  void aFollowerThatHearsNoLeaderForTheLimitIsCutOffOnceAndTakesWritesWhenItHearsOneAgain() {
    caughtUpAndWritable(FOLLOWING);
    watchFor(DOWN_AFTER.plus(EVERY), Role.noLeader());
    assertThat(policy.unwritable()).contains("cut off from the majority");
    assertThat(did).containsExactly(
        "unwritable: this member has not heard from a leader for 3000 ms: it is cut off from the majority");

    did.clear();
    watch(FOLLOWING);
    assertThat(policy.unwritable()).isNull();
    assertThat(did).containsExactly("writable");
  }

  @Test
  void aFollowerCountsFromItsLeadersLastMessage() {
    caughtUpAndWritable(Role.follower(0));
    // A leader it can name, but silent: Ratis reports a growing time since its last message.
    long silentMs = 0;
    while (silentMs + EVERY.toMillis() <= DOWN_AFTER.toMillis()) {
      silentMs += EVERY.toMillis();
      watch(Role.follower(silentMs));
    }
    assertThat(policy.unwritable()).isNull();
    watch(Role.follower(silentMs + EVERY.toMillis()));
    assertThat(policy.unwritable()).contains("cut off");
  }

  @Test
  void aLeaderThatHearsFromNoMajorityIsCutOff() {
    caughtUpAndWritable(LEADING);
    watch(leading(5_000, 20));
    assertThat(policy.unwritable()).isNull(); // two of three: itself and n3
    assertThat(did).containsExactly("down n2");
    did.clear();
    watch(leading(5_000, 5_000));
    assertThat(policy.unwritable()).isEqualTo("this member leads but hears from only 1 of 3 members");
    // Cut off, it records nobody down: it may be the one that is alone.
    assertThat(did).containsExactly("unwritable: this member leads but hears from only 1 of 3 members");
  }

  // --- 34 (1). An election shorter than --member-down-after changes nothing for clients ---

  @Test
  void anElectionShorterThanTheLimitDoesNotCutAMemberOff() {
    caughtUpAndWritable(FOLLOWING);
    watchFor(DOWN_AFTER.minus(EVERY), Role.noLeader()); // a candidate, or a follower that knows no leader
    watch(FOLLOWING);
    assertThat(did).isEmpty();
    assertThat(policy.unwritable()).isNull();
  }

  // --- 55. A leader just elected is not cut off ---

  @Test
  void aLeaderJustElectedIsNotCutOffWhileRatisListsNoFollowers() {
    caughtUpAndWritable(FOLLOWING);
    watch(Role.leader(44, Map.of()));
    assertThat(did).isEmpty();
    assertThat(policy.unwritable()).isNull();
    // Once its election is as old as the limit, an empty follower list is silence.
    watch(Role.leader(DOWN_AFTER.toMillis(), Map.of()));
    assertThat(policy.unwritable()).contains("hears from only 1 of 3");
  }

  // --- 27. Member death is decided once, in the log, by the leader ---

  @Test
  void theLeaderRecordsDownAMemberSilentForTheLimitOnlyWhileTheLogHasItUp() {
    caughtUpAndWritable(LEADING);
    watch(leading(20, DOWN_AFTER.toMillis()));
    assertThat(did).isEmpty();
    watch(leading(20, DOWN_AFTER.toMillis() + 1));
    assertThat(did).containsExactly("down n3");

    did.clear();
    members = List.of(member("n1", 0), member("n2", 0), down("n3"));
    watch(leading(20, 9_000));
    assertThat(did).isEmpty();
  }

  @Test
  void aFollowerRecordsNoMemberDownAndEndsNoOwners() {
    caughtUpAndWritable(FOLLOWING);
    stale = Map.of("n3", 40L);
    watchFor(GRACE.multipliedBy(2), FOLLOWING);
    assertThat(did).isEmpty();
  }

  @Test
  void theLeaderEndsAStaleMembersOwnersOnceItHasSeenThemStaleForTheGraceAndAtMostOncePerGrace() {
    caughtUpAndWritable(LEADING);
    stale = Map.of("n3", 40L);
    watch(LEADING); // seen stale from here
    watchFor(GRACE.minus(EVERY), LEADING);
    assertThat(did).isEmpty();
    watch(LEADING);
    // n3 is up with its current incarnation: only the owners of its past ones go.
    assertThat(did).containsExactly("end n3 keep 'inc-n3'");

    did.clear();
    watchFor(GRACE.minus(EVERY), LEADING);
    assertThat(did).isEmpty();
    watch(LEADING);
    assertThat(did).containsExactly("end n3 keep 'inc-n3'");
  }

  @Test
  void aDownMemberKeepsNoIncarnation() {
    caughtUpAndWritable(LEADING);
    members = List.of(member("n1", 0), member("n2", 0), down("n3"));
    stale = Map.of("n3", 40L);
    watchFor(GRACE.plus(EVERY), LEADING);
    assertThat(did).containsExactly("end n3 keep ''");
  }

  @Test
  void aNewLeaderTimesTheGraceAfresh() {
    caughtUpAndWritable(LEADING);
    stale = Map.of("n3", 40L);
    watchFor(Duration.ofSeconds(6), LEADING);
    watch(FOLLOWING); // the lead went elsewhere for a moment
    watchFor(Duration.ofSeconds(6), LEADING);
    assertThat(did).isEmpty();
    watchFor(Duration.ofMillis(4_250), LEADING); // ten seconds since it led again
    assertThat(did).containsExactly("end n3 keep 'inc-n3'");
  }

  @Test
  void aMemberTheLogSaysIsDownWhileItIsUpRecordsItsReturnUnlessItIsAnnouncingAlready() {
    caughtUpAndWritable(FOLLOWING);
    members = List.of(down("n1"), member("n2", 0), member("n3", 0));
    announcing = true;
    watch(FOLLOWING);
    assertThat(did).isEmpty();
    announcing = false;
    watch(FOLLOWING);
    assertThat(did).containsExactly("return");
  }

  @Test
  void aCutOffMemberDoesNotRecordItsReturn() {
    caughtUpAndWritable(FOLLOWING);
    watchFor(DOWN_AFTER.plus(EVERY), Role.noLeader());
    members = List.of(down("n1"), member("n2", 0), member("n3", 0));
    watchFor(Duration.ofSeconds(1), Role.noLeader());
    assertThat(did).doesNotContain("return");
  }

  // --- 54. A member's new "down" starts a new grace ---

  @Test
  void aMemberStaleSinceANewEntryGetsAWholeNewGrace() {
    caughtUpAndWritable(LEADING);
    stale = Map.of("n3", 40L);
    watchFor(Duration.ofSeconds(8), LEADING);
    stale = Map.of("n3", 90L); // n3 came back and went down again: stale from the new entry
    watchFor(Duration.ofSeconds(8), LEADING);
    assertThat(did).isEmpty();
    watchFor(Duration.ofMillis(2_250), LEADING); // ten seconds since the new entry was seen
    assertThat(did).containsExactly("end n3 keep 'inc-n3'");
  }

  // --- 30. Balance through the log, at a bounded rate ---

  @Test
  void loadIsReportedOnAChangeOfAboutATenthAtMostEveryTwoSeconds() {
    caughtUpAndWritable(FOLLOWING);
    sessions = 100;
    members = List.of(member("n1", 100), member("n2", 100), member("n3", 100));
    watchFor(Membership.BALANCE_EVERY.minus(EVERY), FOLLOWING);
    assertThat(did).isEmpty();
    watch(FOLLOWING);
    assertThat(did).containsExactly("load 100");

    did.clear();
    sessions = 109;
    watchFor(Membership.BALANCE_EVERY, FOLLOWING);
    assertThat(did).isEmpty();
    sessions = 110;
    watchFor(Membership.BALANCE_EVERY.minus(EVERY), FOLLOWING);
    assertThat(did).isEmpty();
    watch(FOLLOWING);
    assertThat(did).containsExactly("load 110");
  }

  @Test
  void anOverloadedMemberShedsAtMostATenthPerRoundToTheLeastLoadedLiveMember() {
    caughtUpAndWritable(FOLLOWING);
    sessions = 300;
    members = List.of(member("n1", 300), member("n2", 100), member("n3", 50));
    watchFor(Membership.BALANCE_EVERY, FOLLOWING);
    // Mean 150: 300 is over 120 % of it; a tenth of 300 per round, to n3.
    assertThat(did).containsExactly("load 300", "shed 30 to n3:9848");

    did.clear();
    watchFor(Membership.BALANCE_EVERY.minus(EVERY), FOLLOWING);
    assertThat(did).isEmpty();
    watch(FOLLOWING);
    assertThat(did).containsExactly("shed 30 to n3:9848");
  }

  @Test
  void aMemberWithinATwentiethOfTheMeanOrAloneShedsNothing() {
    caughtUpAndWritable(FOLLOWING);
    sessions = 110;
    members = List.of(member("n1", 110), member("n2", 100), member("n3", 95));
    watchFor(Membership.BALANCE_EVERY.multipliedBy(2), FOLLOWING);
    assertThat(did).containsExactly("load 110");

    did.clear();
    sessions = 300;
    members = List.of(member("n1", 300), down("n2"), new Member("n3", "inc-n3", "", false, 0));
    watchFor(Membership.BALANCE_EVERY.multipliedBy(2), FOLLOWING);
    assertThat(did).containsExactly("load 300");
  }

  // --- 33. A stopping member leaves the log first ---

  @Test
  void aStoppingMemberNeitherBalancesNorRecordsItsReturn() {
    caughtUpAndWritable(FOLLOWING);
    policy.leave();
    sessions = 300;
    members = List.of(down("n1"), member("n2", 100), member("n3", 50));
    watchFor(Membership.BALANCE_EVERY.multipliedBy(2), FOLLOWING);
    assertThat(did).isEmpty();
  }

  // --- 34 (4). A frozen member holds its sessions' ends ---

  @Test
  void aStalledMemberHoldsItsSessionsEndsWhileOverdueAndFiveSecondsAfter() {
    caughtUpAndWritable(FOLLOWING);
    watchFor(Membership.HOLD_ENDS_AFTER_STALL.plus(EVERY), FOLLOWING); // past the hold that follows catching up
    assertThat(policy.holdsEnds()).isFalse();

    time.advance(Membership.STALL.plus(EVERY)); // frozen: no watch
    assertThat(policy.holdsEnds()).isTrue();
    watch(FOLLOWING); // thawed; this watch is late
    watchFor(Membership.HOLD_ENDS_AFTER_STALL.minus(EVERY.multipliedBy(2)), FOLLOWING);
    assertThat(policy.holdsEnds()).isTrue();
    watchFor(EVERY.multipliedBy(2), FOLLOWING);
    assertThat(policy.holdsEnds()).isFalse();
  }

  // --- 49. A member holds its sessions' ends while it is cut off, and 5 s after ---

  @Test
  void aCutOffMemberHoldsItsSessionsEndsWhileCutOffAndFiveSecondsAfter() {
    caughtUpAndWritable(FOLLOWING);
    watchFor(Membership.HOLD_ENDS_AFTER_STALL.plus(EVERY), FOLLOWING); // past the hold that follows catching up
    assertThat(policy.holdsEnds()).isFalse();
    watchFor(DOWN_AFTER.plus(EVERY), Role.noLeader());
    assertThat(policy.unwritable()).isNotNull();
    watchFor(Membership.HOLD_ENDS_AFTER_STALL.multipliedBy(2), Role.noLeader()); // cut off for longer than any hold
    assertThat(policy.holdsEnds()).isTrue();
    watch(FOLLOWING);
    assertThat(policy.unwritable()).isNull();
    watchFor(Membership.HOLD_ENDS_AFTER_STALL.minus(EVERY), FOLLOWING);
    assertThat(policy.holdsEnds()).isTrue();
    watch(FOLLOWING);
    assertThat(policy.holdsEnds()).isFalse();
  }

  // --- 29. A stopping member hands over its lead and names where to go ---

  @Test
  void aStoppingLeaderHandsTheLeadToTheFollowerHeardFromMostRecentlyWithinTheLimit() {
    assertThat(Membership.heir(leading(80, 20), DOWN_AFTER.toMillis())).isEqualTo("n3");
    assertThat(Membership.heir(leading(80, 9_000), DOWN_AFTER.toMillis())).isEqualTo("n2");
    assertThat(Membership.heir(leading(9_000, 9_000), DOWN_AFTER.toMillis())).isNull();
  }

  @Test
  void sessionsAreSentToLiveMembersWithAnAddressRoundRobinNeverToThisOne() {
    List<Member> all = List.of(member("n1", 0), member("n2", 0), down("n3"),
        new Member("n4", "inc-n4", "", false, 0), member("n5", 0));
    assertThat(List.of(policy.suggest(all), policy.suggest(all), policy.suggest(all)))
        .containsExactly("n2:9848", "n5:9848", "n2:9848");
    assertThat(policy.suggest(List.of(member("n1", 0), down("n2")))).isEmpty();
  }
}
