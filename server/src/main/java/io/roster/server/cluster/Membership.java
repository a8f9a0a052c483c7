package io.roster.server.cluster;

import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The membership policy of one member: given the facts of a moment (its Raft role and whom it
 * heard from, the members and stale owners the log knows, its own session count), it decides
 * what to record in the log and what to tell its sessions. It knows nothing of Ratis: the
 * adapter ({@link ClusterNode}) reads the facts, and {@link #watch} returns what to do as a value,
 * the {@link Effects} of that moment, which the adapter carries out (decision 93); tests drive it
 * on a fake scheduler and read the effects (docs/cluster.md; the rules are decisions 27–34 and
 * 48–55).
 *
 * <p>One thread calls {@link #tick} and {@link #watch} (the adapter's watch thread);
 * {@link #unwritable}, {@link #holdsEnds}, {@link #suggest} and {@link #leave} may be called
 * from any.
 */
final class Membership {

  private static final Logger log = LoggerFactory.getLogger(Membership.class);
  /** A watch this late means the member was stalled: frozen (SIGSTOP), or starved of CPU. */
  static final Duration STALL = Duration.ofSeconds(1);
  /** How often a member reports its load and considers shedding sessions. */
  static final Duration BALANCE_EVERY = Duration.ofSeconds(2);
  /**
   * How long an owner's end waits when this member has just been stalled (frozen or starved), or
   * is just back from being cut off ({@link #holdsEnds} stays true that long).
   * Its clients took the silence for a dead server and registered again through other members,
   * whose entries may still be on their way to a new leader: the ends of their old sessions here
   * must not reach the log first, or subscribers see live instances go and come back. Longer than
   * the log client's request timeout (3 s), after which such entries find the new leader.
   */
  static final Duration HOLD_ENDS_AFTER_STALL = Duration.ofSeconds(5);
  static final String CATCHING_UP = "this cluster member is catching up with the cluster's log";
  /** Why a member that is not in the group's configuration yet does not serve (decision 86). */
  static final String NOT_JOINED = "this cluster member has not joined the group yet: it waits until a member adds it "
      + "(POST /roster/v1/admin/members?add=..., docs/cluster.md)";
  /** Why a member that was in the group, and no longer is, does not serve. */
  static final String REMOVED = "this cluster member is no longer in the group's configuration (it was removed)";

  /**
   * What one watch asks of the member (the policy's output, as etcd raft's {@code Ready} is): the
   * adapter carries it out in the order of the components, each a log entry to propose or
   * something to tell the server.
   *
   * @param writable this member cannot write ({@link Told#reason}), or can again (a null reason):
   *     refuse or accept, and move sessions away; null: nothing to tell
   * @param serving this member's registry may not be read ({@link Told#reason}: it has not joined
   *     the group, is catching up with its log, or was removed), or may be (a null reason): it
   *     serves reads or refuses them; null: nothing to tell
   * @param recordReturn propose this member's {@code member_started} again: the log says it is
   *     down while it is up
   * @param recordDown propose {@code member_down} for each of these members
   * @param endStaleOwners propose {@code end_stale_owners} for each
   * @param reportLoad propose this member's session count; -1: none
   * @param shed ask sessions to move (balance), or null
   */
  record Effects(@Nullable Told writable, @Nullable Told serving, boolean recordReturn, List<String> recordDown,
      List<EndStaleOwners> endStaleOwners, int reportLoad, @Nullable Shed shed) {

    Effects {
      recordDown = List.copyOf(recordDown);
      endStaleOwners = List.copyOf(endStaleOwners);
    }
  }

  /** A change to tell the server: why not ({@code reason}), or null for "again". */
  record Told(@Nullable String reason) {}

  /** Propose {@code end_stale_owners} for {@code member}, keeping {@code keepIncarnation} ("" for none). */
  record EndStaleOwners(String member, String keepIncarnation) {}

  /**
   * Ask {@code count} sessions to move to the member reached at {@code to} ({@code toMember},
   * with {@code toSessions}); this member has {@code here} sessions, the live members
   * {@code mean} on average (for the log line).
   */
  record Shed(int count, String to, String toMember, int toSessions, int here, double mean) {}

  /**
   * A member as the log knows it, as the policy sees it.
   *
   * @param id its member id
   * @param incarnation its current incarnation
   * @param clientAddress where clients reach it ("" when unknown)
   * @param down whether the log records it down
   * @param sessions the session count it last reported
   */
  record Member(String id, String incarnation, String clientAddress, boolean down, int sessions) {}

  /**
   * This member's Raft role at one moment, as its server reports it.
   *
   * @param leader whether it leads
   * @param roleElapsedMs how long it has had this role
   * @param followersSilentMs leader only: each follower's member id and ms since it was last heard
   * @param leaderSilentMs a follower's ms since it heard from a leader it can name; -1 when it
   *     names none (a candidate, or a follower that knows no leader: neither is contact)
   */
  record Role(boolean leader, long roleElapsedMs, Map<String, Long> followersSilentMs, long leaderSilentMs) {
    static Role leader(long roleElapsedMs, Map<String, Long> followersSilentMs) {
      return new Role(true, roleElapsedMs, new LinkedHashMap<>(followersSilentMs), -1);
    }

    static Role follower(long leaderSilentMs) {
      return new Role(false, 0, Map.of(), leaderSilentMs);
    }

    static Role noLeader() {
      return follower(-1);
    }
  }

  /**
   * The facts of one moment.
   *
   * @param caughtUp whether this member has applied its own {@code member_started} entry
   * @param inGroup whether the group's configuration, as this member has it, lists it
   * @param role its Raft role
   * @param groupSize how many members the group has
   * @param members the members the log knows
   * @param stale members with owners of a past incarnation (or down), by the log index they are stale since
   * @param sessions the sessions this member holds
   * @param announcing whether this member's {@code member_started} is being proposed now
   */
  record Facts(boolean caughtUp, boolean inGroup, Role role, int groupSize, List<Member> members,
      Map<String, Long> stale, int sessions, boolean announcing) {

    /** The facts of a member that is in the group's configuration. */
    Facts(boolean caughtUp, Role role, int groupSize, List<Member> members,
        Map<String, Long> stale, int sessions, boolean announcing) {
      this(caughtUp, true, role, groupSize, members, stale, sessions, announcing);
    }
  }

  private final String memberId;
  private final Duration memberDownAfter;
  private final Duration memberGrace;
  private final Scheduler time;
  private final AtomicInteger suggestions = new AtomicInteger();
  private volatile @Nullable String unwritable = CATCHING_UP;
  /** Why this member's registry may not be read (not joined, catching up, removed), or null. */
  private volatile @Nullable String unservable = CATCHING_UP;
  /** When the watch last ran; a gap far beyond its period means this JVM was stalled. */
  private volatile long watchedAtNanos;
  /** Until when this member holds back owners' ends after a stall or a cut-off. */
  private volatile long holdEndsUntilNanos;
  /** Stopping: it recorded itself down and must not record its return, nor balance. */
  private volatile boolean leaving;
  // The watch thread's own.
  /** Whether this member has been cut off since it caught up (for the log line). */
  private boolean wasCutOff;
  /** Whether the server was last told it can write (true), cannot (false), or nothing yet (null). */
  private @Nullable Boolean toldWritable;
  /** When this member last led or heard from a named leader. */
  private long leaderSeenNanos;
  /** Leader only: since when this leader has seen each stale member stale, and since which entry. */
  private final Map<String, StaleSeen> staleSeen = new HashMap<>();
  private long lastBalanceNanos;
  private int reportedSessions;

  Membership(String memberId, Duration memberDownAfter, Duration memberGrace, Scheduler time) {
    this.memberId = memberId;
    this.memberDownAfter = memberDownAfter;
    this.memberGrace = memberGrace;
    this.time = time;
    long now = time.nanoTime();
    this.watchedAtNanos = now;
    this.leaderSeenNanos = now;
    this.lastBalanceNanos = now;
  }

  /** Null when this member can take writes, else why not. */
  @Nullable String unwritable() {
    return unwritable;
  }

  /** Null when this member's registry may be read (it is in the group and caught up), else why not. */
  @Nullable String unservable() {
    return unservable;
  }

  /**
   * The periodic watch's start, before {@link #watch}: whether it ran far later than its period
   * (a stall, after which the ends of this member's sessions are held for
   * {@link #HOLD_ENDS_AFTER_STALL}).
   */
  void tick() {
    long now = time.nanoTime();
    long gap = now - watchedAtNanos;
    watchedAtNanos = now;
    if (gap > STALL.toNanos()) {
      holdEndsUntilNanos = now + HOLD_ENDS_AFTER_STALL.toNanos();
      log.warn("Cluster member {} was stalled for {} ms (frozen or starved of CPU); the ends of sessions "
          + "are held for {} ms", memberId, TimeUnit.NANOSECONDS.toMillis(gap), HOLD_ENDS_AFTER_STALL.toMillis());
    }
  }

  /** Marks the start of the watch (no stall is counted before it). */
  void started() {
    watchedAtNanos = time.nanoTime();
  }

  /**
   * One look at the facts: whether this member serves reads (it is in the group's configuration
   * and has caught up) and whether it can write (it serves, and hears from a leader, or as the
   * leader from a majority, within {@code --member-down-after}); on the leader, members silent
   * that long recorded down and stale owners ended after {@code --member-grace}; its own return
   * recorded when the log says it is down; balance. Returns what to do about it, for the adapter
   * to carry out.
   */
  Effects watch(Facts facts) {
    Out out = new Out();
    long silenceMs = memberDownAfter.toMillis();
    Role role = facts.role();
    long now = time.nanoTime();
    @Nullable String unread = !facts.inGroup() ? (facts.caughtUp() ? REMOVED : NOT_JOINED)
        : !facts.caughtUp() ? CATCHING_UP : null;
    @Nullable String why;
    if (unread != null) {
      why = unread;
    } else if (role.leader()) {
      why = leaderCutOff(role, facts.groupSize(), silenceMs);
    } else {
      if (role.leaderSilentMs() >= 0) {
        leaderSeenNanos = Math.max(leaderSeenNanos, now - TimeUnit.MILLISECONDS.toNanos(role.leaderSilentMs()));
      }
      why = now - leaderSeenNanos > TimeUnit.MILLISECONDS.toNanos(silenceMs)
          ? "this member has not heard from a leader for " + silenceMs + " ms: it is cut off from the majority"
          : null;
    }
    if (role.leader()) {
      leaderSeenNanos = now;
    }
    unwritable = why;
    Boolean told = toldWritable;
    if (facts.caughtUp() && (told == null || told != (why == null))) {
      if (why != null) {
        log.warn("Cluster member {} cannot take writes: {}; its sessions are asked to move", memberId, why);
      } else {
        log.info("Cluster member {} takes writes{}", memberId, wasCutOff ? " again" : "");
        // Back from being cut off: the ends of sessions that left meanwhile wait a little more,
        // so that their clients' registrations (refused everywhere until now) reach the log first.
        holdEndsUntilNanos = now + HOLD_ENDS_AFTER_STALL.toNanos();
      }
      wasCutOff |= why != null;
      toldWritable = why == null;
      out.writable = new Told(why);
    }
    if (!java.util.Objects.equals(unservable, unread)) {
      if (unread != null && unservable == null) {
        log.warn("Cluster member {} no longer serves: {}", memberId, unread);
      } else if (NOT_JOINED.equals(unread)) {
        log.info("Cluster member {} waits to be added to the group (its configuration does not list it); it serves "
            + "nothing until then", memberId);
      }
      unservable = unread;
      out.serving = new Told(unread);
    }
    if (why == null) {
      Member me = member(facts, memberId);
      if (me != null && me.down() && !facts.announcing() && !leaving) {
        log.info("The log says member {} is down; recording its return", memberId);
        out.recordReturn = true;
      }
    }
    if (role.leader() && why == null) {
      lead(facts, silenceMs, out);
    } else {
      staleSeen.clear();
    }
    if (why == null && !leaving) {
      balance(facts, out);
    }
    return out.effects();
  }

  /**
   * True while this member holds back the ends of its sessions' owners: while it is stalled (its
   * watch is overdue) or cut off, and for {@link #HOLD_ENDS_AFTER_STALL} after either. Those ends
   * may be its clients' reaction to the trouble, and must not overtake their new registrations,
   * which were refused everywhere while no member could write (decision 49).
   */
  boolean holdsEnds() {
    long now = time.nanoTime();
    return now - watchedAtNanos > STALL.toNanos() || now - holdEndsUntilNanos < 0 || unwritable != null;
  }

  /** This member is stopping: it neither records its return nor balances from now on. */
  void leave() {
    leaving = true;
  }

  /** A live member of {@code members} other than this one for a client to move to (round robin), or "". */
  String suggest(List<Member> members) {
    List<String> live = members.stream()
        .filter(m -> !m.down() && !m.id().equals(memberId) && !m.clientAddress().isEmpty())
        .map(Member::clientAddress)
        .toList();
    return live.isEmpty() ? "" : live.get(Math.floorMod(suggestions.getAndIncrement(), live.size()));
  }

  /**
   * Why a leader cannot take writes, or null: it has heard from fewer than a majority (itself
   * included) within {@code silenceMs}. A leader elected less than {@code silenceMs} ago counts
   * the votes that elected it as contact: until Ratis has started its leader state the role
   * lists no followers at all, and a member that took that for "cut off" asked all its sessions
   * to move right after winning an election (decision 55).
   */
  static @Nullable String leaderCutOff(Role role, int members, long silenceMs) {
    if (role.roleElapsedMs() < silenceMs) {
      return null;
    }
    int heard = 1;
    for (long silent : role.followersSilentMs().values()) {
      heard += silent <= silenceMs ? 1 : 0;
    }
    return heard * 2 <= members ? "this member leads but hears from only " + heard + " of " + members + " members" : null;
  }

  /**
   * The follower a stopping leader hands its lead to: the one heard from most recently, if
   * within {@code silenceMs}; null when none is.
   */
  static @Nullable String heir(Role role, long silenceMs) {
    String next = null;
    long best = Long.MAX_VALUE;
    for (Map.Entry<String, Long> f : role.followersSilentMs().entrySet()) {
      if (f.getValue() < best && f.getValue() <= silenceMs) {
        best = f.getValue();
        next = f.getKey();
      }
    }
    return next;
  }

  /**
   * Reports this member's session count to the log when it changed by about 10 % (at most every
   * {@link #BALANCE_EVERY}), and sheds sessions to the least loaded live member while it holds
   * more than 120 % of the mean: at most 10 % of its sessions (at least one) per round, so that
   * a member that (re)joins fills up gradually, never with every client at once.
   */
  private void balance(Facts facts, Out out) {
    long now = time.nanoTime();
    if (now - lastBalanceNanos < BALANCE_EVERY.toNanos()) {
      return;
    }
    lastBalanceNanos = now;
    int mine = facts.sessions();
    if (Math.abs(mine - reportedSessions) >= Math.max(2, reportedSessions / 10)) {
      reportedSessions = mine;
      out.reportLoad = mine;
    }
    List<Member> live = facts.members().stream()
        .filter(m -> !m.down() && !m.clientAddress().isEmpty()).toList();
    if (live.size() < 2) {
      return;
    }
    double mean = 0;
    Member least = null;
    for (Member m : live) {
      int sessions = m.id().equals(memberId) ? mine : m.sessions();
      mean += sessions;
      if (!m.id().equals(memberId) && (least == null || m.sessions() < least.sessions())) {
        least = m;
      }
    }
    mean /= live.size();
    if (least == null || mine <= mean * 1.2 || mine - mean < 2 || least.sessions() >= mean) {
      return;
    }
    int shed = (int) Math.min(mine - Math.ceil(mean), Math.max(1, mine / 10));
    out.shed = new Shed(shed, least.clientAddress(), least.id(), least.sessions(), mine, mean);
  }

  /** The leader's part of the watch: members down, and owners whose grace is over. */
  private void lead(Facts facts, long silenceMs, Out out) {
    for (Map.Entry<String, Long> f : facts.role().followersSilentMs().entrySet()) {
      Member m = member(facts, f.getKey());
      if (m != null && !m.down() && f.getValue() > silenceMs) {
        log.warn("Member {} silent for {} ms: recording it down", f.getKey(), f.getValue());
        out.recordDown.add(f.getKey());
      }
    }
    Map<String, Long> stale = facts.stale();
    staleSeen.keySet().retainAll(stale.keySet());
    long now = time.nanoTime();
    for (Map.Entry<String, Long> e : stale.entrySet()) {
      String id = e.getKey();
      // The grace runs from when this leader saw the member stale since that entry: a new "down"
      // (a new stale-since index) starts it again.
      StaleSeen seen = staleSeen.get(id);
      if (seen == null || seen.sinceIndex() != e.getValue()) {
        seen = new StaleSeen(e.getValue(), now);
        staleSeen.put(id, seen);
      }
      if (now - seen.nanos() >= memberGrace.toNanos()) {
        Member m = member(facts, id);
        String keep = m == null || m.down() ? "" : m.incarnation();
        staleSeen.put(id, new StaleSeen(seen.sinceIndex(), now)); // at most one proposal per grace
        out.endStaleOwners.add(new EndStaleOwners(id, keep));
      }
    }
  }

  private static @Nullable Member member(Facts facts, String id) {
    for (Member m : facts.members()) {
      if (m.id().equals(id)) {
        return m;
      }
    }
    return null;
  }

  /** The effects of one watch as it decides them. */
  private static final class Out {
    @Nullable Told writable;
    @Nullable Told serving;
    boolean recordReturn;
    final List<String> recordDown = new ArrayList<>();
    final List<EndStaleOwners> endStaleOwners = new ArrayList<>();
    int reportLoad = -1;
    @Nullable Shed shed;

    Effects effects() {
      return new Effects(writable, serving, recordReturn, recordDown, endStaleOwners, reportLoad, shed);
    }
  }

  /** A stale member as the leader's watch saw it: stale since log entry {@code sinceIndex}, seen so at {@code nanos}. */
  private record StaleSeen(long sinceIndex, long nanos) {}
}
