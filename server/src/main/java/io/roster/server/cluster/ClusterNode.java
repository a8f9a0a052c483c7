package io.roster.server.cluster;

import io.roster.proto.cluster.v1.Batch;
import io.roster.proto.cluster.v1.EndStaleOwners;
import io.roster.proto.cluster.v1.MemberDown;
import io.roster.proto.cluster.v1.MemberStarted;
import io.roster.server.config.ServerConfig;
import io.roster.server.model.Owner;
import io.roster.server.registry.Registry;
import io.roster.server.registry.Writer;
import io.roster.server.time.Deadline;
import io.roster.server.time.SystemScheduler;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcFactory;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This server as a member of the cluster: its Raft server (Apache Ratis) in the one group of
 * {@code --members}, the state machine that applies the log to the registry, the group-commit
 * {@link Writer} its sessions write through, and the watch that keeps the membership facts in the
 * log true (docs/cluster.md).
 *
 * <p>The watch runs every {@link #WATCH_EVERY} on a thread of its own:
 * <ul>
 *   <li>on every member: whether it can write (it hears from a leader, or as the leader from a
 *       majority, within {@code --member-down-after}); a member that cannot tells its sessions to
 *       move and refuses writes and new sessions until it can again;
 *   <li>on the leader: a member silent for {@code --member-down-after} is recorded down in the
 *       log; a member with owners of a past incarnation (or that is down) gets them ended, in the
 *       log, once {@code --member-grace} has passed since the leader saw that;
 *   <li>on a member the log says is down while it is up: it records its return.
 * </ul>
 *
 * <p>A member reports itself caught up once it has applied its own {@code member_started}
 * entry: everything the group had committed before it joined is applied by then.
 */
public final class ClusterNode implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ClusterNode.class);
  static final Duration WATCH_EVERY = Duration.ofMillis(250);
  /** A watch this late means the member was stalled: frozen (SIGSTOP), or starved of CPU. */
  static final Duration STALL = Duration.ofSeconds(1);
  /** How often the log client sends an entry again while no leader takes it (decision 55). */
  static final Duration RETRY_EVERY = Duration.ofMillis(20);
  /** How long the log client retries an entry in all before the entry fails. */
  static final Duration RETRY_FOR = Duration.ofSeconds(4);
  /** A log client with nothing committed for this long, and failing, is replaced. */
  static final Duration RENEW_CLIENT_AFTER = Duration.ofSeconds(5);
  /** How often a member reports its load and considers shedding sessions. */
  static final Duration BALANCE_EVERY = Duration.ofSeconds(2);
  /** The one group all members form. */
  static final RaftGroupId GROUP_ID = RaftGroupId.valueOf(
      UUID.nameUUIDFromBytes("roster-registry".getBytes(StandardCharsets.UTF_8)));

  /** What this server does when the cluster asks (implemented by the server's wiring). */
  public interface Local {
    /** This member's own log entry came back: it has caught up with the group. */
    void caughtUp();

    /**
     * This member cannot write now ({@code reason}), or can again ({@code reason} null): refuse
     * or accept new sessions, and when it cannot, ask the sessions it has to move to a member
     * that {@code suggest} names (each call may name another).
     */
    void writable(String reason, java.util.function.Supplier<String> suggest);

    /** The log ended these owners of this member's current incarnation: their sessions must redo. */
    void ownersEnded(List<Owner> owners, java.util.function.Supplier<String> suggest);

    /** The sessions this member holds now. */
    int sessionCount();

    /** Asks {@code count} sessions to move to {@code to} (balance); returns how many were asked. */
    int shed(int count, String to);
  }

  private final ServerConfig config;
  private final Peer self;
  private final String memberId;
  private final String incarnation;
  private final RaftGroup group;
  private final RaftServer server;
  private final RaftProperties props;
  /** The log client; replaced when it is stuck (see {@link #renewIfStuck}). */
  private volatile RaftClient client;
  /** When an entry this member sent was last committed (or the client last renewed). */
  private volatile long sentOkNanos;
  private final java.util.concurrent.atomic.AtomicBoolean renewing = new java.util.concurrent.atomic.AtomicBoolean();
  private final RegistryStateMachine stateMachine;
  private final Proposer proposer;
  private final SystemScheduler timer;
  private final Local local;
  private final CompletableFuture<Void> caughtUp = new CompletableFuture<>();
  /** Leader only (watch thread): since when this leader has seen each stale member stale, and since which entry. */
  private final Map<String, StaleSeen> staleSeen = new HashMap<>();
  private final AtomicInteger suggestions = new AtomicInteger();
  private volatile String clientAddress = "";
  private volatile String unwritable = "catching up with the cluster's log";
  private volatile boolean returning;
  /** Stopping: it recorded itself down and must not record its return. */
  private volatile boolean leaving;
  /** Whether this member has been cut off since it caught up (for the log line). */
  private boolean wasCutOff;
  /**
   * When this member last led or heard from a leader (watch thread only). An election in
   * progress (this member a candidate, with no leader to report) is not "cut off" until it has
   * lasted as long as a silent leader would.
   */
  private long leaderSeenNanos;
  /** When the watch last ran; a gap far beyond its period means this JVM was stalled. */
  private volatile long watchedAtNanos;
  /** Until when this member holds back owners' ends after a stall or a cut-off (see {@link Proposer#HOLD_ENDS_AFTER_STALL}). */
  private volatile long holdEndsUntilNanos;
  // The watch's own (one thread).
  private long lastBalanceNanos;
  private int reportedSessions;
  private volatile boolean closed;

  private ClusterNode(ServerConfig config, Registry registry, EntryClock clock, Local local, LongSupplier wallMicros,
      String incarnation) throws IOException {
    this.config = config;
    this.local = local;
    this.incarnation = incarnation;
    List<RaftPeer> peers = new ArrayList<>();
    for (Peer m : Peer.all(config.members())) {
      peers.add(RaftPeer.newBuilder().setId(Peer.peerId(m.id())).setAddress(m.address()).build());
    }
    this.self = Peer.self(config);
    this.memberId = self.id();
    this.group = RaftGroup.valueOf(GROUP_ID, peers);
    this.timer = new SystemScheduler("roster-cluster", 1);
    long now = timer.nanoTime();
    this.sentOkNanos = now;
    this.leaderSeenNanos = now;
    this.watchedAtNanos = now;
    this.lastBalanceNanos = now;
    this.props = properties(config, memberId);
    this.client = newClient();
    this.proposer = new Proposer(memberId, incarnation, this::send, timer, config.groupCommitWindow(), 100_000,
        wallMicros, () -> unwritable, this::holdsEnds);
    this.stateMachine = new RegistryStateMachine(registry, clock, this::onApplied);
    this.server = RaftServer.newBuilder()
        .setServerId(Peer.peerId(memberId))
        .setGroup(group)
        .setProperties(props)
        .setStateMachine(stateMachine)
        .setOption(RaftStorage.StartupOption.RECOVER)
        .build();
  }

  /**
   * Starts this member: its Raft server on {@code --peer-port}, then its {@code member_started}
   * entry (retried until the group takes it). Returns at once; {@link Local#caughtUp} follows.
   *
   * @param registry the registry to apply the log to; its clock must be {@code clock}
   * @param wallMicros the wall clock that batches carry (revisions come from it)
   */
  public static ClusterNode start(ServerConfig config, Registry registry, EntryClock clock, Local local,
      LongSupplier wallMicros, String incarnation) {
    try {
      ClusterNode node = new ClusterNode(config, registry, clock, local, wallMicros, incarnation);
      node.server.start();
      log.info("Cluster member {} (incarnation {}) started on peer port {}; members {}", node.memberId, incarnation,
          config.peerPort(), config.members());
      node.watchedAtNanos = node.timer.nanoTime();
      node.timer.schedule(node::watchAndAgain, WATCH_EVERY);
      return node;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the cluster member on peer port " + config.peerPort(), e);
    }
  }

  /** A clock for the registry of a member: see {@link EntryClock}. */
  public static EntryClock entryClock() {
    return new EntryClock();
  }

  /**
   * Tells the member where clients reach it (known once the client port is bound), and
   * proposes its {@code member_started} entry.
   */
  public void announce(String clientAddress) {
    this.clientAddress = clientAddress;
    proposeStarted();
  }

  private void proposeStarted() {
    if (closed) {
      return;
    }
    var started = io.roster.proto.cluster.v1.Command.newBuilder().setMemberStarted(MemberStarted.newBuilder()
        .setMember(memberId).setIncarnation(incarnation).setClientAddress(clientAddress)).build();
    returning = true;
    proposer.<Object>propose(started, true).whenComplete((r, failed) -> {
      returning = false;
      if (failed != null) {
        log.debug("member_started not taken yet ({}); retrying", failed.toString());
        timer.schedule(this::proposeStarted, Duration.ofMillis(500));
      } else if (caughtUp.complete(null)) {
        log.info("Cluster member {} caught up with the log (applied index {})", memberId,
            appliedIndex());
        local.caughtUp();
        timer.execute(this::watch); // says at once whether it can take writes
      }
    });
  }

  /** Changes go through the log: group commit, then applied on every member. */
  public Writer writer() {
    return proposer;
  }

  /** This member's id in the log (its --members entry's id, by default its host:peerPort). */
  public String memberId() {
    return memberId;
  }

  /** The host of this member's --members entry (where peers reach it). */
  public String memberHost() {
    return self.host();
  }

  /** The owner node of this member's sessions: member id "@" incarnation. */
  public String ownerNode() {
    return memberId + "@" + incarnation;
  }

  /** Completes once this member has caught up with the log. */
  public CompletableFuture<Void> caughtUp() {
    return caughtUp;
  }

  /** Null when this member can take writes, else why not. */
  public String unwritable() {
    return unwritable;
  }

  /** A client of the group, retrying each entry every {@link #RETRY_EVERY} for {@link #RETRY_FOR} across leader changes. */
  private RaftClient newClient() {
    ClientId id = ClientId.randomId();
    return RaftClient.newBuilder()
        .setProperties(props)
        .setRaftGroup(group)
        .setClientId(id)
        .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep((int) (RETRY_FOR.toMillis() / RETRY_EVERY.toMillis()),
            TimeDuration.valueOf(RETRY_EVERY.toMillis(), TimeUnit.MILLISECONDS)))
        .setClientRpc(new GrpcFactory(new Parameters()).newRaftClientRpc(id, props))
        .build();
  }

  private CompletableFuture<?> send(byte[] entry) {
    RaftClient c = client;
    return c.async().send(Message.valueOf(ByteString.copyFrom(entry))).handle((reply, error) -> {
      Throwable failed = error != null ? error : reply.isSuccess() ? null : reply.getException();
      if (failed == null) {
        sentOkNanos = timer.nanoTime();
        return reply;
      }
      renewIfStuck(c, failed);
      throw failed instanceof CompletionException ce ? ce : new CompletionException(failed);
    });
  }

  /**
   * Replaces the log client when {@code failed}, the current one, has had no entry committed for
   * {@link #RENEW_CLIENT_AFTER}. Ratis's ordered client can stay on a leader that was killed and
   * restarted: every entry is answered "not the leader, suggested leader: (the dead one)" while
   * the other members commit (decision 34). A new client finds
   * the leader afresh; entries the old one still holds fail, and their requests with them
   * (UNAVAILABLE: the SDK moves or retries; an owner's end is proposed again).
   */
  private void renewIfStuck(RaftClient failed, Throwable why) {
    if (closed || client != failed || timer.nanoTime() - sentOkNanos < RENEW_CLIENT_AFTER.toNanos()
        || !renewing.compareAndSet(false, true)) {
      return;
    }
    try {
      client = newClient();
      sentOkNanos = timer.nanoTime();
      log.warn("Cluster member {}: the log client committed nothing for {} ms (last: {}); using a new one", memberId,
          RENEW_CLIENT_AFTER.toMillis(), why.toString());
      timer.execute(() -> {
        try {
          failed.close();
        } catch (IOException | RuntimeException e) {
          log.debug("Closing the replaced log client", e);
        }
      });
    } finally {
      renewing.set(false);
    }
  }

  private void onApplied(Batch batch, List<Object> results, long index) {
    proposer.onApplied(batch, results);
    for (int i = 0; i < batch.getCommandsCount(); i++) {
      var c = batch.getCommands(i);
      if (c.hasEndStaleOwners() && results.get(i) instanceof List<?> ended && !ended.isEmpty()) {
        String mine = ownerNode();
        List<Owner> ours = ended.stream().map(Owner.class::cast).filter(o -> o.nodeId().equals(mine)).toList();
        log.info("The log ended {} owners of member {}{}", ended.size(), c.getEndStaleOwners().getMember(),
            ours.isEmpty() ? "" : " (" + ours.size() + " of them sessions here: they are asked to move and redo)");
        if (!ours.isEmpty()) {
          local.ownersEnded(ours, this::suggest);
        }
      }
    }
  }

  /**
   * True while this member holds back the ends of its sessions' owners: while it is stalled (its
   * watch is overdue) or cut off, and for {@link Proposer#HOLD_ENDS_AFTER_STALL} after either.
   * Those ends may be its clients' reaction to the trouble, and must not overtake their new
   * registrations, which were refused everywhere while no member could write (decision 49).
   */
  boolean holdsEnds() {
    long now = timer.nanoTime();
    return now - watchedAtNanos > STALL.toNanos() || now - holdEndsUntilNanos < 0 || unwritable != null;
  }

  // --- The watch ---

  private void watchAndAgain() {
    long now = timer.nanoTime();
    long gap = now - watchedAtNanos;
    watchedAtNanos = now;
    if (gap > STALL.toNanos()) {
      holdEndsUntilNanos = now + Proposer.HOLD_ENDS_AFTER_STALL.toNanos();
      log.warn("Cluster member {} was stalled for {} ms (frozen or starved of CPU); the ends of sessions "
          + "are held for {} ms", memberId, TimeUnit.NANOSECONDS.toMillis(gap), Proposer.HOLD_ENDS_AFTER_STALL.toMillis());
    }
    watch();
    if (!closed) {
      timer.schedule(this::watchAndAgain, WATCH_EVERY);
    }
  }

  private void watch() {
    try {
      watchOnce();
    } catch (RuntimeException e) {
      log.warn("Cluster watch failed; trying again in {} ms", WATCH_EVERY.toMillis(), e);
    }
  }

  private void watchOnce() {
    if (closed) {
      return;
    }
    DivisionInfo info = division().getInfo();
    RoleInfoProto role = info.getRoleInfoProto();
    long silenceMs = config.memberDownAfter().toMillis();
    String why = null;
    if (!caughtUp.isDone()) {
      why = "catching up with the cluster's log";
    } else if (info.isLeader()) {
      why = leaderCutOff(role, group.getPeers().size(), silenceMs);
    } else {
      long now = timer.nanoTime();
      // A follower that knows no leader reports an empty leader with no elapsed time: not contact.
      if (role.hasFollowerInfo() && role.getFollowerInfo().getLeaderInfo().hasId()) {
        long heardAt = now - TimeUnit.MILLISECONDS.toNanos(role.getFollowerInfo().getLeaderInfo().getLastRpcElapsedTimeMs());
        leaderSeenNanos = Math.max(leaderSeenNanos, heardAt);
      }
      if (now - leaderSeenNanos > TimeUnit.MILLISECONDS.toNanos(silenceMs)) {
        why = "this member has not heard from a leader for " + silenceMs + " ms: it is cut off from the majority";
      }
    }
    if (info.isLeader()) {
      leaderSeenNanos = timer.nanoTime();
    }
    String before = unwritable;
    unwritable = why;
    if (caughtUp.isDone() && (before == null) != (why == null)) {
      if (why != null) {
        log.warn("Cluster member {} cannot take writes: {}; its sessions are asked to move", memberId, why);
      } else {
        log.info("Cluster member {} takes writes{}", memberId, wasCutOff ? " again" : "");
      }
      wasCutOff |= why != null;
      if (why == null) {
        // Back from being cut off: the ends of sessions that left meanwhile wait a little more,
        // so that their clients' registrations (refused everywhere until now) reach the log first.
        holdEndsUntilNanos = timer.nanoTime() + Proposer.HOLD_ENDS_AFTER_STALL.toNanos();
      }
      local.writable(why, this::suggest);
    }
    if (why == null) {
      RegistryStateMachine.Member me = stateMachine.member(memberId);
      if (me != null && me.down() && !returning && !leaving) {
        log.info("The log says member {} is down; recording its return", memberId);
        proposeStarted();
      }
    }
    if (info.isLeader() && why == null) {
      lead(role, silenceMs);
    } else {
      staleSeen.clear();
    }
    if (why == null && !leaving) {
      balance();
    }
  }

  /**
   * Why a leader cannot take writes, or null: it has heard from fewer than a majority (itself
   * included) within {@code silenceMs}. A leader elected less than {@code silenceMs} ago counts
   * the votes that elected it as contact: until Ratis has started its leader state the role
   * lists no followers at all, and a member that took that for "cut off" asked all its sessions
   * to move right after winning an election (decision 55).
   */
  static String leaderCutOff(RoleInfoProto role, int members, long silenceMs) {
    if (role.getRoleElapsedTimeMs() < silenceMs) {
      return null;
    }
    int heard = 1;
    for (ServerRpcProto f : role.getLeaderInfo().getFollowerInfoList()) {
      heard += f.getLastRpcElapsedTimeMs() <= silenceMs ? 1 : 0;
    }
    return heard * 2 <= members ? "this member leads but hears from only " + heard + " of " + members + " members" : null;
  }

  /**
   * Reports this member's session count to the log when it changed by about 10 % (at most every
   * {@link #BALANCE_EVERY}), and sheds sessions to the least loaded live member while it holds
   * more than 120 % of the mean: at most 10 % of its sessions (at least one) per round, so that
   * a member that (re)joins fills up gradually, never with every client at once.
   */
  private void balance() {
    long now = timer.nanoTime();
    if (now - lastBalanceNanos < BALANCE_EVERY.toNanos()) {
      return;
    }
    lastBalanceNanos = now;
    int mine = local.sessionCount();
    if (Math.abs(mine - reportedSessions) >= Math.max(2, reportedSessions / 10)) {
      reportedSessions = mine;
      proposeQuietly(io.roster.proto.cluster.v1.Command.newBuilder().setMemberLoad(
          io.roster.proto.cluster.v1.MemberLoad.newBuilder().setMember(memberId).setSessions(mine)).build());
    }
    List<RegistryStateMachine.Member> live = stateMachine.members().stream()
        .filter(m -> !m.down() && !m.clientAddress().isEmpty()).toList();
    if (live.size() < 2) {
      return;
    }
    double mean = 0;
    RegistryStateMachine.Member least = null;
    for (RegistryStateMachine.Member m : live) {
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
    int asked = local.shed(shed, least.clientAddress());
    log.info("Balance: {} sessions here, mean {}; asked {} to move to {} ({} sessions)", mine,
        String.format(java.util.Locale.ROOT, "%.1f", mean), asked, least.id(), least.sessions());
  }

  /** The leader's part of the watch: members down, and owners whose grace is over. */
  private void lead(RoleInfoProto role, long silenceMs) {
    for (ServerRpcProto f : role.getLeaderInfo().getFollowerInfoList()) {
      String id = Peer.member(f.getId().getId().toStringUtf8());
      RegistryStateMachine.Member m = stateMachine.member(id);
      if (m != null && !m.down() && f.getLastRpcElapsedTimeMs() > silenceMs) {
        log.warn("Member {} silent for {} ms: recording it down", id, f.getLastRpcElapsedTimeMs());
        proposeQuietly(io.roster.proto.cluster.v1.Command.newBuilder()
            .setMemberDown(MemberDown.newBuilder().setMember(id)).build());
      }
    }
    Map<String, Long> stale = stateMachine.stale();
    staleSeen.keySet().retainAll(stale.keySet());
    long now = timer.nanoTime();
    for (Map.Entry<String, Long> e : stale.entrySet()) {
      String id = e.getKey();
      // The grace runs from when this leader saw the member stale since that entry: a new "down"
      // (a new stale-since index) starts it again.
      StaleSeen seen = staleSeen.get(id);
      if (seen == null || seen.sinceIndex() != e.getValue()) {
        seen = new StaleSeen(e.getValue(), now);
        staleSeen.put(id, seen);
      }
      if (now - seen.nanos() >= config.memberGrace().toNanos()) {
        RegistryStateMachine.Member m = stateMachine.member(id);
        String keep = m == null || m.down() ? "" : m.incarnation();
        staleSeen.put(id, new StaleSeen(seen.sinceIndex(), now)); // at most one proposal per grace
        proposeQuietly(io.roster.proto.cluster.v1.Command.newBuilder()
            .setEndStaleOwners(EndStaleOwners.newBuilder().setMember(id).setKeepIncarnation(keep)).build());
      }
    }
  }

  private void proposeQuietly(io.roster.proto.cluster.v1.Command command) {
    try {
      proposer.propose(command, false).exceptionally(e -> {
        log.debug("Could not propose {}: {}", command.getChangeCase(), e.toString());
        return null;
      });
    } catch (RuntimeException e) {
      log.debug("Could not propose {}: {}", command.getChangeCase(), e.toString());
    }
  }

  /** A live member other than this one for a client to move to (round robin), or "". */
  public String suggest() {
    List<String> live = stateMachine.members().stream()
        .filter(m -> !m.down() && !m.id().equals(memberId) && !m.clientAddress().isEmpty())
        .map(RegistryStateMachine.Member::clientAddress)
        .toList();
    return live.isEmpty() ? "" : live.get(Math.floorMod(suggestions.getAndIncrement(), live.size()));
  }

  /** What this member knows of every member, for Admin/ListMembers. */
  public List<MemberView> members() {
    DivisionInfo info = division().getInfo();
    RoleInfoProto role = info.getRoleInfoProto();
    Map<String, Long> contact = new HashMap<>();
    if (info.isLeader()) {
      role.getLeaderInfo().getFollowerInfoList().forEach(f -> contact.put(Peer.member(f.getId().getId().toStringUtf8()),
          f.getLastRpcElapsedTimeMs()));
    } else if (role.hasFollowerInfo() && role.getFollowerInfo().hasLeaderInfo()) {
      var l = role.getFollowerInfo().getLeaderInfo();
      contact.put(Peer.member(l.getId().getId().toStringUtf8()), l.getLastRpcElapsedTimeMs());
    }
    Map<String, Long> commits = new HashMap<>();
    for (CommitInfoProto c : division().getCommitInfos()) {
      commits.put(Peer.member(c.getServer().getId().toStringUtf8()), c.getCommitIndex());
    }
    long top = commits.values().stream().mapToLong(Long::longValue).max().orElse(0);
    String leader = info.getLeaderId() == null ? "" : Peer.member(info.getLeaderId().toString());
    Map<String, RegistryStateMachine.Member> known = stateMachine.members().stream()
        .collect(Collectors.toMap(RegistryStateMachine.Member::id, m -> m));
    List<MemberView> views = new ArrayList<>();
    for (RaftPeer p : group.getPeers()) {
      String id = Peer.member(p.getId().toString());
      RegistryStateMachine.Member m = known.get(id);
      boolean self = id.equals(memberId);
      views.add(new MemberView(id, self, id.equals(leader) ? "leader" : self ? info.getCurrentRole().name()
          .toLowerCase(java.util.Locale.ROOT) : "follower",
          m == null ? "" : m.clientAddress(), m == null ? "" : m.incarnation(), m != null && m.down(),
          self ? 0 : contact.getOrDefault(id, -1L),
          commits.containsKey(id) ? Math.max(0, top - commits.get(id)) : -1, m == null ? 0 : m.sessions()));
    }
    return views;
  }

  /**
   * One member as this member sees it.
   *
   * @param lastContactMs ms since this member last heard from it (0 for itself, -1 unknown)
   * @param lag how many log entries its commit index is behind the highest known (-1 unknown)
   * @param sessions the sessions it last reported to the log
   */
  public record MemberView(String id, boolean self, String role, String clientAddress, String incarnation,
      boolean down, long lastContactMs, long lag, int sessions) {}

  /** The index of the last entry applied here. */
  public long appliedIndex() {
    return division().getInfo().getLastAppliedIndex();
  }

  private RaftServer.Division division() {
    try {
      return server.getDivision(GROUP_ID);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Before this member stops: when it leads, hands the lead to the most up-to-date member that
   * answers, so that writes go on without waiting for an election (bounded by {@code timeout}).
   */
  public void handOverLead(Duration timeout) {
    if (closed || !division().getInfo().isLeader()) {
      return;
    }
    RoleInfoProto role = division().getInfo().getRoleInfoProto();
    String next = null;
    long best = Long.MAX_VALUE;
    for (ServerRpcProto f : role.getLeaderInfo().getFollowerInfoList()) {
      if (f.getLastRpcElapsedTimeMs() < best && f.getLastRpcElapsedTimeMs() <= config.memberDownAfter().toMillis()) {
        best = f.getLastRpcElapsedTimeMs();
        next = f.getId().getId().toStringUtf8();
      }
    }
    if (next == null) {
      return;
    }
    try {
      var reply = client.admin().transferLeadership(RaftPeerId.valueOf(next), timeout.toMillis());
      log.info("Handed the lead to {} before stopping: {}", Peer.member(next), reply.isSuccess() ? "done" : reply.getException());
    } catch (IOException | RuntimeException e) {
      log.warn("Could not hand the lead to {} before stopping: {}", Peer.member(next), e.toString());
    }
  }

  /**
   * This member is stopping: it records itself down in the log (bounded by {@code timeout}), so
   * that other members stop suggesting it to clients and balancing clients to it, and it does
   * not record its return. Its owners that have not moved by the grace are ended as a down
   * member's are.
   */
  public void leave(Duration timeout) {
    leaving = true;
    try {
      proposer.propose(io.roster.proto.cluster.v1.Command.newBuilder()
          .setMemberDown(MemberDown.newBuilder().setMember(memberId)).build(), true)
          .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      log.debug("Could not record leaving: {}", e.toString());
    }
  }

  /**
   * The stop grace is over: the sessions still here are about to be cut. Their owners are not
   * ended in the log by this member; the leader ends those that do not move within
   * {@code --member-grace} (this member has recorded itself down with {@link #leave}).
   */
  public void keepRemainingOwners() {
    proposer.keepOwners();
  }

  /**
   * Waits until the changes this member proposed are applied or failed (its last sessions'
   * ends, as they leave), at most {@code timeout}.
   */
  public void awaitProposed(Duration timeout) throws InterruptedException {
    Deadline deadline = Deadline.after(timeout);
    while ((proposer.queued() > 0 || proposer.inFlightBatches() > 0) && !deadline.passed()) {
      Thread.sleep(5);
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    timer.close();
    long entries = stateMachine.entriesApplied();
    log.info("Cluster member {} applied {} log entries with {} commands ({} per entry)", memberId, entries,
        stateMachine.commandsApplied(), entries == 0 ? 0 : String.format("%.1f", (double) stateMachine.commandsApplied() / entries));
    proposer.failAll("this member is stopping");
    try {
      client.close();
    } catch (IOException e) {
      log.debug("Closing the log client", e);
    }
    try {
      server.close();
    } catch (IOException e) {
      log.warn("Closing the Raft server", e);
    }
  }

  // --- Configuration ---

  /**
   * Ratis settings, chosen for a registry's small, ephemeral entries (docs/cluster.md): the log
   * is kept on disk under {@code --data-dir}/raft/, flushed without waiting (the owners of
   * ephemeral entries redo them after a full-cluster restart), with a small segment cache;
   * election timeouts at Ratis's defaults (shorter ones were unsafe on a loaded 2-core machine).
   */
  private static RaftProperties properties(ServerConfig config, String memberId) {
    RaftProperties p = new RaftProperties();
    RaftConfigKeys.Rpc.setType(p, new CommitCappedRpc());
    GrpcConfigKeys.Server.setPort(p, config.peerPort());
    Path dir = config.dataDir().resolve("raft").resolve(memberId.replaceAll("[^A-Za-z0-9._-]", "_"));
    RaftServerConfigKeys.setStorageDir(p, List.of(dir.toFile()));
    RaftServerConfigKeys.Log.setUnsafeFlushEnabled(p, true);
    RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf("16MB"));
    RaftServerConfigKeys.Log.setSegmentCacheNumMax(p, 2);
    // An entry is at most ~1 MiB of commands (Proposer.MAX_BATCH_BYTES), or one command as large
    // as a client's frame; the write buffer is a direct buffer allocated once, so it stays small.
    RaftServerConfigKeys.Log.Appender.setBufferByteLimit(p, SizeInBytes.valueOf("4MB"));
    RaftServerConfigKeys.Log.setWriteBufferSize(p, SizeInBytes.valueOf("4100KB"));
    GrpcConfigKeys.setMessageSizeMax(p, SizeInBytes.valueOf("32MB"));
    RaftServerConfigKeys.RetryCache.setExpiryTime(p, TimeDuration.valueOf(30, TimeUnit.SECONDS));
    // A snapshot every --snapshot-every entries, and the log before it goes: the disk and a
    // restarting member's replay stay bounded by the registry's size, not its history.
    RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
    RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, config.snapshotEvery());
    RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
    RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
    RaftServerConfigKeys.Log.setPurgeGap(p, (int) Math.min(config.snapshotEvery(), 1024));
    RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(3, TimeUnit.SECONDS));
    return p;
  }

  /** A stale member as the leader's watch saw it: stale since log entry {@code sinceIndex}, seen so at {@code nanos}. */
  private record StaleSeen(long sinceIndex, long nanos) {}
}
