package io.roster.server.cluster;

import io.roster.proto.cluster.v1.Batch;
import io.roster.proto.cluster.v1.EndStaleOwners;
import io.roster.proto.cluster.v1.MemberDown;
import io.roster.proto.cluster.v1.MemberStarted;
import io.roster.server.config.ClusterSettings;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This server as a member of the cluster, on Apache Ratis: its Raft server in the one group of
 * {@code --members} (settings, start, lead hand-over, close), the log client (renewed when it is
 * stuck), the state machine that applies the log to the registry and the group-commit
 * {@link Writer} its sessions write through (docs/cluster.md).
 *
 * <p>Every {@link #WATCH_EVERY}, on a thread of its own, it reads the facts of the moment (its
 * Raft role and whom it heard from, the members and stale owners the log knows, the server's
 * session count) and hands them to the {@link Membership} policy, which decides what to record
 * in the log and what to tell the server; this class carries that out ({@link
 * Membership.Effects}). The watch starts at {@link #announce}: until then the server that holds
 * this member is still being built, and its {@link Local} is never called before.
 *
 * <p>A member reports itself caught up once it has applied its own {@code member_started}
 * entry: everything the group had committed before it joined is applied by then. A member
 * proposes that entry only once the group's configuration lists it: one started to join a group
 * that exists already (found on its first start, {@link GroupProbe}) starts in no configuration,
 * runs no election, and waits until a member adds it ({@link #changeMembers}; decision 86).
 */
public final class ClusterNode implements Members, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ClusterNode.class);
  static final Duration WATCH_EVERY = Duration.ofMillis(250);
  /** The one group all members form. */
  static final RaftGroupId GROUP_ID = RaftGroupId.valueOf(
      UUID.nameUUIDFromBytes("roster-registry".getBytes(StandardCharsets.UTF_8)));
  /** Why a member does not serve until it has caught up with the log: what it says from its start. */
  public static final String CATCHING_UP = Membership.CATCHING_UP;
  /**
   * How long the leader waits for any answer from a member being added before the change fails
   * (Ratis's staging timeout; its default, three times the 300 ms RPC timeout, fails a member
   * that a loaded machine keeps busy for a second while it installs the snapshot).
   */
  static final Duration STAGING_TIMEOUT = Duration.ofSeconds(10);

  /**
   * What this server does when the cluster asks (implemented by the server's wiring). Called on
   * the member's own threads, and never before {@link #announce}: the server may still be
   * building what these methods use until then.
   */
  public interface Local {
    /** This member's own log entry came back: it has caught up with the group. */
    void caughtUp();

    /**
     * This member cannot write now ({@code reason}), or can again ({@code reason} null): refuse
     * or accept new sessions, and when it cannot, ask the sessions it has to move to a member
     * that {@code suggest} names (each call may name another).
     */
    void writable(@Nullable String reason, java.util.function.Supplier<String> suggest);

    /**
     * This member's registry may not be read now ({@code reason}: it has not joined the group,
     * is catching up with the log, or was removed), or may be ({@code reason} null).
     */
    void serving(@Nullable String reason);

    /** The log ended these owners of this member's current incarnation: their sessions must redo. */
    void ownersEnded(List<Owner> owners, java.util.function.Supplier<String> suggest);

    /** The sessions this member holds now. */
    int sessionCount();

    /** Asks {@code count} sessions to move to {@code to} (balance); returns how many were asked. */
    int shed(int count, String to);
  }

  private final ClusterSettings config;
  private final Peer self;
  private final String memberId;
  private final String incarnation;
  /** The group as {@code --members} gives it; {@link #currentPeers} after the start. */
  private final RaftGroup group;
  private final RaftServer server;
  private final RaftProperties props;
  private final LogClient client;
  private final RegistryStateMachine stateMachine;
  private final Proposer proposer;
  private final SystemScheduler timer;
  private final PeerHandshakes handshakes;
  /** Asks other members what they know of the group (first start, and a change of members). */
  private final GroupProbe probe;
  private final Local local;
  private final Membership membership;
  private final CompletableFuture<Void> caughtUp = new CompletableFuture<>();
  private volatile String clientAddress = "";
  /** This member's {@code member_started} is being proposed. */
  private volatile boolean announcing;
  /** The watch runs: {@link #announce} started it. */
  private final AtomicBoolean watching = new AtomicBoolean();
  private volatile boolean closed;

  private ClusterNode(ClusterSettings config, String host, Path dataDir, Registry registry, EntryClock clock,
      Local local, LongSupplier wallMicros, String incarnation) throws IOException {
    this.config = config;
    this.local = local;
    this.incarnation = incarnation;
    this.self = Peer.self(config);
    this.timer = new SystemScheduler("roster-cluster", 1);
    this.handshakes = new PeerHandshakes(timer, String.valueOf(config.peerTlsCa()));
    // First: a bad file starts nothing.
    Parameters parameters;
    try {
      parameters = PeerTls.parameters(PeerTls.load(config, self.host(), handshakes));
    } catch (RuntimeException e) {
      timer.close();
      throw e;
    }
    List<RaftPeer> peers = new ArrayList<>();
    for (Peer m : Peer.all(config.members())) {
      peers.add(RaftPeer.newBuilder().setId(Peer.peerId(m.id())).setAddress(m.address()).build());
    }
    this.memberId = self.id();
    this.group = RaftGroup.valueOf(GROUP_ID, peers);
    this.membership = new Membership(memberId, config.memberDownAfter(), config.memberGrace(), timer, new Effects());
    this.props = properties(config, dataDir, memberId, Peer.bindHost(config, host, self));
    this.probe = new GroupProbe(props, parameters);
    RaftGroup start = startGroup(config, dataDir);
    this.client = new LogClient(memberId, props, parameters, this::currentGroup, timer);
    this.proposer = new Proposer(memberId, incarnation, client::send, timer, config.groupCommitWindow(), 100_000,
        wallMicros, membership::unwritable, membership::holdsEnds);
    this.stateMachine = new RegistryStateMachine(registry, clock, this::onApplied);
    stateMachine.onShutDownByGroup(this::shutDownByGroup);
    this.server = RaftServer.newBuilder()
        .setServerId(Peer.peerId(memberId))
        .setGroup(start)
        .setProperties(props)
        .setStateMachine(stateMachine)
        .setParameters(parameters)
        .setOption(RaftStorage.StartupOption.RECOVER)
        .build();
  }

  /**
   * The group this member's Raft server starts in. On a storage that holds a configuration (any
   * start but the first) Ratis reads it from there, whatever this says. On the first start it
   * asks the other members of {@code --members} ({@link GroupProbe#firstStart}): the group's
   * configuration when it lists this member already (a member replaced on an empty data
   * directory); no configuration at all when the group exists without it, so that it runs no
   * election (the others would tell it to shut down) and waits to be added; {@code --members}
   * when nobody answers, a new cluster.
   */
  private RaftGroup startGroup(ClusterSettings config, Path dataDir) {
    Path storage = io.roster.server.store.DataDir.raft(dataDir, memberId).resolve(GROUP_ID.getUuid().toString()).resolve("current");
    if (holdsConfiguration(storage)) {
      return group;
    }
    List<Peer> others = Peer.all(config.members()).stream().filter(p -> !p.id().equals(memberId)).toList();
    List<RaftPeer> found = others.isEmpty() ? null : probe.firstStart(memberId, others);
    if (found == null) {
      log.info("Cluster member {} starts on an empty data directory and no other member answers: it forms the group "
          + "of --members {}", memberId, config.members());
      return group;
    }
    if (found.isEmpty()) {
      log.info("Cluster member {} starts on an empty data directory, and the group exists without it: it waits, not "
          + "serving, until a member adds it (POST /roster/v1/admin/members?add={} on any member; docs/cluster.md)",
          memberId, self.id().equals(self.address()) ? self.address() : self.id() + "=" + self.address());
      return RaftGroup.valueOf(GROUP_ID);
    }
    log.info("Cluster member {} starts on an empty data directory; the group lists it already: it catches up from the "
        + "leader", memberId);
    return RaftGroup.valueOf(GROUP_ID, found);
  }

  /** Whether the Raft storage at {@code current} holds a log or a configuration (not a first start). */
  private static boolean holdsConfiguration(Path current) {
    if (!java.nio.file.Files.isDirectory(current)) {
      return false;
    }
    try (var files = java.nio.file.Files.list(current)) {
      return files.map(f -> f.getFileName().toString())
          .anyMatch(name -> name.startsWith("log_") || name.equals("raft-meta.conf"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the Raft storage " + current, e);
    }
  }

  /**
   * Starts this member's Raft server on {@code --peer-port}; returns at once. {@link #announce}
   * then starts its watch and proposes its {@code member_started} entry (retried until the group
   * takes it), and {@link Local#caughtUp} follows.
   *
   * @param config the cluster's settings
   * @param host {@code --host}: the peer port listens there unless {@code --peer-host} says otherwise
   * @param dataDir {@code --data-dir}: the Raft log and snapshots go under its raft/
   * @param registry the registry to apply the log to; its clock must be {@code clock}
   * @param wallMicros the wall clock that batches carry (revisions come from it)
   */
  public static ClusterNode start(ClusterSettings config, String host, Path dataDir, Registry registry,
      EntryClock clock, Local local, LongSupplier wallMicros, String incarnation) {
    try {
      ClusterNode node = new ClusterNode(config, host, dataDir, registry, clock, local, wallMicros, incarnation);
      node.server.start();
      log.info("Cluster member {} (incarnation {}) started on peer address {}:{} ({}); members {}", node.memberId,
          incarnation, Peer.bindHost(config, host, node.self), config.peerPort(),
          config.peerTls() ? "mutual TLS, peers signed by " + config.peerTlsCa() : "plaintext", config.members());
      if (!config.peerTls()) {
        log.warn("--peer-tls off: the peer port {}:{} takes any process that reaches it as a member (it can write "
            + "to the log, read it and change the group); give --peer-tls-cert, --peer-tls-key and --peer-tls-ca "
            + "instead (docs/cluster.md)", Peer.bindHost(config, host, node.self), config.peerPort());
      }
      return node;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the cluster member on peer address " + Peer.bindHost(config, host,
          Peer.self(config)) + ":" + config.peerPort() + " (--peer-host picks the address)", e);
    }
  }

  /** A clock for the registry of a member: see {@link EntryClock}. */
  public static EntryClock entryClock() {
    return new EntryClock();
  }

  /**
   * Tells the member where clients reach it (known once the client port is bound), starts its
   * watch and proposes its {@code member_started} entry. Called once, when the server is built:
   * from now on the member calls its {@link Local}.
   */
  public void announce(String clientAddress) {
    this.clientAddress = clientAddress;
    if (!watching.getAndSet(true)) {
      membership.started();
      timer.schedule(this::watchAndAgain, WATCH_EVERY);
    }
    proposeStarted();
  }

  private void proposeStarted() {
    if (closed) {
      return;
    }
    if (!inGroup()) {
      // Not in the group's configuration yet: whatever it proposed would go to a group that has
      // not taken it, and the others would count it a live member before it can serve.
      timer.schedule(this::proposeStarted, WATCH_EVERY);
      return;
    }
    var started = io.roster.proto.cluster.v1.Command.newBuilder().setMemberStarted(MemberStarted.newBuilder()
        .setMember(memberId).setIncarnation(incarnation).setClientAddress(clientAddress)).build();
    announcing = true;
    proposer.<Object>propose(started, true).whenComplete((r, failed) -> {
      announcing = false;
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

  @Override
  public @Nullable String unwritable() {
    return membership.unwritable();
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

  // --- The watch ---

  private void watchAndAgain() {
    handshakes.cleanUp();
    membership.tick();
    watch();
    if (!closed) {
      timer.schedule(this::watchAndAgain, WATCH_EVERY);
    }
  }

  private void watch() {
    if (closed) {
      return;
    }
    try {
      membership.watch(facts());
    } catch (RuntimeException e) {
      log.warn("Cluster watch failed; trying again in {} ms", WATCH_EVERY.toMillis(), e);
    }
  }

  /** The facts of this moment, for the policy. */
  private Membership.Facts facts() {
    DivisionInfo info = division().getInfo();
    return new Membership.Facts(caughtUp.isDone(), inGroup(), role(info), currentPeers().size(), stateMachine.members(),
        stateMachine.stale(), local.sessionCount(), announcing);
  }

  /**
   * Whether this member's Raft server runs and the group's configuration, as it has it, lists
   * this member (a joint configuration: its new half).
   */
  private boolean inGroup() {
    RaftServer.Division d = division();
    if (!d.getInfo().isAlive()) {
      return false;
    }
    org.apache.ratis.protocol.RaftPeerId me = Peer.peerId(memberId);
    return d.getRaftConf().getCurrentPeers().stream().anyMatch(p -> p.getId().equals(me));
  }

  /**
   * The group told this member's Raft server to shut down (it asked for votes, and the leader's
   * configuration does not list it): it serves nothing from now on (the watch finds its Raft
   * server closed), and says what to do.
   */
  private void shutDownByGroup() {
    log.error("Cluster member {}: the group shut its Raft server down, since the group's configuration does not "
        + "list it (a member that was removed, or one whose data directory holds another configuration). It serves "
        + "nothing from now on: stop it; to add it again, empty its --data-dir, start it and add it through a member "
        + "(docs/cluster.md, Changing the members)", memberId);
    timer.execute(this::watch);
  }

  /** This member's Raft role as the policy sees it: who it heard from, how long ago. */
  private static Membership.Role role(DivisionInfo info) {
    RoleInfoProto role = info.getRoleInfoProto();
    if (info.isLeader()) {
      Map<String, Long> followers = new LinkedHashMap<>();
      for (ServerRpcProto f : role.getLeaderInfo().getFollowerInfoList()) {
        followers.put(Peer.member(f.getId().getId().toStringUtf8()), f.getLastRpcElapsedTimeMs());
      }
      return Membership.Role.leader(role.getRoleElapsedTimeMs(), followers);
    }
    // A follower that knows no leader reports an empty leader with no elapsed time: not contact.
    if (role.hasFollowerInfo() && role.getFollowerInfo().getLeaderInfo().hasId()) {
      return Membership.Role.follower(role.getFollowerInfo().getLeaderInfo().getLastRpcElapsedTimeMs());
    }
    return Membership.Role.noLeader();
  }

  /** What the policy decided, carried out: log entries proposed, the server told. */
  private final class Effects implements Membership.Effects {
    @Override
    public void recordDown(String member) {
      proposeQuietly(io.roster.proto.cluster.v1.Command.newBuilder()
          .setMemberDown(MemberDown.newBuilder().setMember(member)).build());
    }

    @Override
    public void endStaleOwners(String member, String keepIncarnation) {
      proposeQuietly(io.roster.proto.cluster.v1.Command.newBuilder()
          .setEndStaleOwners(EndStaleOwners.newBuilder().setMember(member).setKeepIncarnation(keepIncarnation)).build());
    }

    @Override
    public void reportLoad(int sessions) {
      proposeQuietly(io.roster.proto.cluster.v1.Command.newBuilder().setMemberLoad(
          io.roster.proto.cluster.v1.MemberLoad.newBuilder().setMember(memberId).setSessions(sessions)).build());
    }

    @Override
    public void recordReturn() {
      proposeStarted();
    }

    @Override
    public void writable(@Nullable String reason) {
      local.writable(reason, ClusterNode.this::suggest);
    }

    @Override
    public void serving(@Nullable String reason) {
      local.serving(reason);
    }

    @Override
    public int shed(int count, String to) {
      return local.shed(count, to);
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

  /**
   * The members the log says are up, by id and sorted: the same list on every member that has
   * applied the same entries (who shares the probes of persistent instances). Reads only the
   * state machine, never Ratis.
   */
  public List<String> liveMembers() {
    return stateMachine.members().stream().filter(m -> !m.down()).map(RegistryStateMachine.Member::id).sorted()
        .toList();
  }

  /** A live member other than this one for a client to move to (round robin), or "". */
  public String suggest() {
    return membership.suggest(stateMachine.members());
  }

  @Override
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
    for (RaftPeer p : currentPeers()) {
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

  /** The index of the last entry applied here. */
  public long appliedIndex() {
    return division().getInfo().getLastAppliedIndex();
  }

  /** Whether this member leads the log now. */
  public boolean isLeader() {
    return division().getInfo().isLeader();
  }

  /** Whether this member knows a leader now (itself or another). */
  public boolean hasLeader() {
    return division().getInfo().getLeaderId() != null;
  }

  /** Leader changes this member has seen since it started. */
  public long leaderChanges() {
    return stateMachine.leaderChanges();
  }

  /** Entries applied here since the newest snapshot (all of them when there is none). */
  public long entriesSinceSnapshot() {
    SnapshotInfo s = stateMachine.getLatestSnapshot();
    return Math.max(0, appliedIndex() - (s == null ? 0 : s.getIndex()));
  }

  /** When the newest snapshot was written (its file's time, epoch milliseconds), or -1 when there is none. */
  public long snapshotMillis() {
    java.nio.file.Path file = stateMachine.latestSnapshotFile();
    try {
      return file == null ? -1 : java.nio.file.Files.getLastModifiedTime(file).toMillis();
    } catch (IOException e) {
      return -1;
    }
  }

  /** Told, for each of this member's log entries applied here, the microseconds from sending it to applying it. */
  public void onCommitted(java.util.function.LongConsumer micros) {
    proposer.onCommitted(micros);
  }

  /**
   * The group's members as its configuration stands now on this member: {@code --members} until
   * a configuration change ({@link #changeMembers}) is applied, and what the stored configuration
   * says after a restart.
   */
  private java.util.Collection<RaftPeer> currentPeers() {
    RaftServer s = server;
    if (s == null) {
      return group.getPeers(); // the log client is built before the server
    }
    return division().getRaftConf().getCurrentPeers();
  }

  /** The group as it stands now; {@code --members} while this member is in no configuration yet. */
  private RaftGroup currentGroup() {
    java.util.Collection<RaftPeer> peers = currentPeers();
    return peers.isEmpty() ? group : RaftGroup.valueOf(GROUP_ID, peers);
  }

  /**
   * Changes the group's members at runtime (Ratis's configuration change, through the leader):
   * adds the {@code --members} entries of {@code add} ({@code id=host:peerPort} or {@code
   * host:peerPort}), removes the member ids of {@code remove}. Before it asks the group, it asks
   * each member it adds ({@link GroupProbe}): it must answer on its peer port as the entry's id,
   * in no configuration that lists it (started on an empty data directory, waiting to be added).
   * A member added catches up from the leader's snapshot and log before the new configuration
   * takes effect; a member removed leaves the log's member list (recorded down, its owners ended
   * after {@code --member-grace}). Returns the member ids of the new configuration, within about
   * {@code timeout} (plus {@link GroupProbe#TIMEOUT} per member added).
   *
   * <p>A refusal, and a change the group answered as failed (a member added that made no progress
   * for {@link #STAGING_TIMEOUT}, another change in progress), change nothing.
   *
   * @throws IllegalArgumentException naming the entry when one is malformed, already a member, or
   *     not one, or when no member would be left
   * @throws IllegalStateException naming the entry when a member added does not answer, answers as
   *     another member, or holds a configuration of its own; or when this member is not in the group
   * @throws IOException when the group refused the change, or it did not complete in time
   */
  @Override
  public List<String> changeMembers(List<String> add, List<String> remove, Duration timeout) throws IOException {
    if (!inGroup()) {
      throw new IllegalStateException("this member (" + memberId + ") is not in the group's configuration: ask a "
          + "member that is");
    }
    Map<String, RaftPeer> next = new java.util.LinkedHashMap<>();
    for (RaftPeer p : currentPeers()) {
      next.put(Peer.member(p.getId().toString()), p);
    }
    for (String id : remove) {
      if (next.remove(id) == null) {
        throw new IllegalArgumentException("remove: \"" + id + "\" (expected: a member id of " + next.keySet() + ")");
      }
    }
    List<Peer> added = new ArrayList<>();
    for (String entry : add) {
      Peer peer;
      try {
        peer = Peer.parse(entry);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("add: \"" + entry + "\" (expected: host:peerPort or id=host:peerPort)");
      }
      if (next.containsKey(peer.id())) {
        throw new IllegalArgumentException("add: \"" + entry + "\" (expected: a member not in " + next.keySet() + ")");
      }
      next.put(peer.id(), RaftPeer.newBuilder().setId(Peer.peerId(peer.id())).setAddress(peer.address()).build());
      added.add(peer);
    }
    if (next.isEmpty()) {
      throw new IllegalArgumentException("remove: " + remove + " (expected: at least one member left)");
    }
    for (Peer peer : added) {
      checkJoining(peer);
    }
    List<String> target = List.copyOf(next.keySet());
    log.info("Cluster member {}: changing the members to {}", memberId, target);
    RaftClientReply reply;
    try {
      reply = client.setConfiguration(List.copyOf(next.values()), timeout);
    } catch (IOException e) {
      if (currentMemberIds().equals(new java.util.HashSet<>(target))) {
        return target; // committed, though the answer was lost
      }
      throw new IOException(refusal(e, timeout), e);
    }
    if (!reply.isSuccess()) {
      if (currentMemberIds().equals(new java.util.HashSet<>(target))) {
        return target;
      }
      throw new IOException(refusal(reply.getException(), timeout), reply.getException());
    }
    return target;
  }

  /**
   * Checks a member about to be added: it answers on its peer port, as the id its entry gives,
   * and holds no configuration that lists it (so it is a member started to join, not one of
   * another group, nor a removed member started again on its old data).
   */
  private void checkJoining(Peer peer) {
    String entry = peer.id().equals(peer.address()) ? peer.address() : peer.id() + "=" + peer.address();
    GroupProbe.Answer a;
    try {
      a = probe.ask(peer, GroupProbe.TIMEOUT);
    } catch (IOException e) {
      throw new IllegalStateException("add: \"" + entry + "\": no member answers on " + peer.address() + " ("
          + GroupProbe.shortCause(e) + "); start it first, with an empty --data-dir and --members listing every member and "
          + "itself (docs/cluster.md), and ask again; nothing changed");
    }
    if (!a.id().equals(peer.id())) {
      throw new IllegalStateException("add: \"" + entry + "\": the member on " + peer.address() + " is \"" + a.id()
          + "\" (its own --members entry): add it as " + (a.id().equals(peer.address()) ? peer.address()
          : a.id() + "=" + peer.address()) + "; nothing changed");
    }
    if (a.lists(a.id())) {
      throw new IllegalStateException("add: \"" + entry + "\": the member on " + peer.address() + " holds a group "
          + "configuration of its own that lists it (" + a.members() + "): it was removed and started again on its old "
          + "data, or formed a group alone; stop it, empty its --data-dir, start it again and ask again; nothing changed");
    }
  }

  /** The member ids of the configuration as it stands on this member. */
  private java.util.Set<String> currentMemberIds() {
    java.util.Set<String> ids = new java.util.HashSet<>();
    currentPeers().forEach(p -> ids.add(Peer.member(p.getId().toString())));
    return ids;
  }

  /** What the admin is told when the group did not take a change. */
  private static String refusal(@Nullable Throwable why, Duration timeout) {
    Throwable cause = why;
    while (cause != null && !(cause instanceof org.apache.ratis.protocol.exceptions.RaftException)
        && cause.getCause() != null && cause.getCause() != cause) {
      cause = cause.getCause();
    }
    if (cause instanceof org.apache.ratis.protocol.exceptions.ReconfigurationTimeoutException) {
      return "a member added made no progress catching up from the leader for " + STAGING_TIMEOUT.toSeconds()
          + " s (it stopped, or is not reachable from the leader); nothing changed";
    }
    if (cause instanceof org.apache.ratis.protocol.exceptions.ReconfigurationInProgressException) {
      return "another change of members is in progress; nothing changed, ask again once it is done";
    }
    return "the change did not complete within " + timeout.toSeconds() + " s (" + (cause == null ? "no answer"
        : GroupProbe.shortCause(cause)) + "); if it was still in progress it may yet complete";
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
    String next = Membership.heir(role(division().getInfo()), config.memberDownAfter().toMillis());
    if (next == null) {
      return;
    }
    try {
      var reply = client.transferLeadership(next, timeout);
      log.info("Handed the lead to {} before stopping: {}", next, reply.isSuccess() ? "done" : reply.getException());
    } catch (IOException | RuntimeException e) {
      log.warn("Could not hand the lead to {} before stopping: {}", next, e.toString());
    }
  }

  /**
   * This member is stopping: it records itself down in the log (bounded by {@code timeout}), so
   * that other members stop suggesting it to clients and balancing clients to it, and it does
   * not record its return. Its owners that have not moved by the grace are ended as a down
   * member's are.
   */
  public void leave(Duration timeout) {
    membership.leave();
    if (!caughtUp.isDone()) {
      return; // this incarnation was never announced: the log would drop its entries
    }
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
    // Closing waits for the client's and the server's open streams to the other members to end
    // (Ratis gives each channel up to 3 s): side by side, a stop waits that out once, not twice.
    Thread closingClient = new Thread(client::close, "roster-log-client-close");
    closingClient.start();
    try {
      server.close();
    } catch (IOException e) {
      log.warn("Closing the Raft server", e);
    }
    try {
      closingClient.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // --- Configuration ---

  /**
   * Ratis settings, chosen for a registry's small, ephemeral entries (docs/cluster.md): the log
   * is kept on disk under {@code --data-dir}/raft/, flushed without waiting (the owners of
   * ephemeral entries redo them after a full-cluster restart), with a small segment cache;
   * election timeouts of 0.7-1.4 s with pre-vote (decision 87).
   */
  private static RaftProperties properties(ClusterSettings config, Path dataDir, String memberId, String peerHost) {
    RaftProperties p = new RaftProperties();
    RaftConfigKeys.Rpc.setType(p, new CommitCappedRpc());
    GrpcConfigKeys.Server.setHost(p, peerHost);
    GrpcConfigKeys.Server.setPort(p, config.peerPort());
    Path dir = io.roster.server.store.DataDir.raft(dataDir, memberId);
    RaftServerConfigKeys.setStorageDir(p, List.of(dir.toFile()));
    // Every entry is on the disk before it counts towards a commit (docs/persistence.md): settings,
    // holds and persistent instances have no owner to register them again. The flush runs on a
    // thread of its own, so that appends go on meanwhile and one flush covers what gathered.
    RaftServerConfigKeys.Log.setUnsafeFlushEnabled(p, false);
    RaftServerConfigKeys.Log.setAsyncFlushEnabled(p, true);
    RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf("16MB"));
    RaftServerConfigKeys.Log.setSegmentCacheNumMax(p, 2);
    // An entry is at most ~1 MiB of commands (Proposer.MAX_BATCH_BYTES), or one command as large
    // as a client's frame; the write buffer is a direct buffer allocated once, so it stays small.
    RaftServerConfigKeys.Log.Appender.setBufferByteLimit(p, SizeInBytes.valueOf("4MB"));
    RaftServerConfigKeys.Log.setWriteBufferSize(p, SizeInBytes.valueOf("4100KB"));
    GrpcConfigKeys.setMessageSizeMax(p, SizeInBytes.valueOf("32MB"));
    RaftServerConfigKeys.RetryCache.setExpiryTime(p, TimeDuration.valueOf(30, TimeUnit.SECONDS));
    RaftServerConfigKeys.setStagingTimeout(p, TimeDuration.valueOf(STAGING_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
    // A snapshot every --snapshot-every entries, and the log before it goes: the disk and a
    // restarting member's replay stay bounded by the registry's size, not its history.
    RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
    RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, config.snapshotEvery());
    RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
    RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
    RaftServerConfigKeys.Log.setPurgeGap(p, (int) Math.min(config.snapshotEvery(), 1024));
    RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(3, TimeUnit.SECONDS));
    // Elections for a machine that pauses (decision 87): a follower waits 0.7-1.4 s without hearing
    // from its leader before it stands (the leader's heartbeats go every half of the minimum), and
    // asks for pre-votes first, so that a member that was itself paused does not depose a leader
    // the others still hear.
    RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(ServerConfig.ELECTION_TIMEOUT_MIN.toMillis(),
        TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(ServerConfig.ELECTION_TIMEOUT_MAX.toMillis(),
        TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.LeaderElection.setPreVote(p, true);
    return p;
  }
}
