package io.roster.server.cluster;

import io.roster.proto.cluster.v1.Batch;
import io.roster.server.config.ClusterSettings;
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
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
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
 * session count) and hands them to the {@link Membership} policy, which returns what to record
 * in the log and what to tell the server ({@link Membership.Effects}); {@link MemberWatch} carries
 * that out, {@link MemberChanges} changes the members, {@link RaftSettings} holds the Ratis
 * properties. The watch starts at {@link #announce}: until then the server that holds
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
  private final Membership membership;
  private final MemberWatch watch;
  private final MemberChanges changes;
  private final CompletableFuture<Void> caughtUp = new CompletableFuture<>();
  /** This member's {@code member_started} is being proposed. */
  /** The watch runs: {@link #announce} started it. */
  private volatile boolean closed;

  private ClusterNode(ClusterSettings config, String host, Path dataDir, Registry registry, EntryClock clock,
      Local local, LongSupplier wallMicros, String incarnation) throws IOException {
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
    this.membership = new Membership(memberId, config.memberDownAfter(), config.memberGrace(), timer);
    this.props = RaftSettings.properties(config, dataDir, memberId, Peer.bindHost(config, host, self));
    this.probe = new GroupProbe(props, parameters);
    RaftGroup start = probe.startGroup(group, self, config.members(), dataDir);
    this.client = new LogClient(memberId, props, parameters, this::currentGroup, timer);
    this.proposer = new Proposer(memberId, incarnation, client::send, timer, config.groupCommitWindow(), 100_000,
        wallMicros, membership::unwritable, membership::holdsEnds);
    this.stateMachine = new RegistryStateMachine(registry, clock, this::onApplied);
    stateMachine.onShutDownByGroup(this::shutDownByGroup);
    this.watch = new MemberWatch(this, incarnation, membership, stateMachine, proposer, local, handshakes);
    this.changes = new MemberChanges(this, memberId, client, probe, membership, proposer, stateMachine,
        config.memberDownAfter());
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
    watch.announce(clientAddress);
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
    watch.onApplied(batch, results);
  }

  /**
   * Whether this member's Raft server runs and the group's configuration, as it has it, lists
   * this member (a joint configuration: its new half).
   */
  boolean inGroup() {
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
    timer.execute(watch::watch);
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
    return membership.suggest(members(stateMachine));
  }

  /** The members the log knows, as the policy sees them. */
  static List<Membership.Member> members(RegistryStateMachine stateMachine) {
    return stateMachine.members().stream().map(m -> new Membership.Member(m.id(), m.incarnation(), m.clientAddress(),
        m.down(), m.sessions())).toList();
  }

  @Override
  public List<MemberView> members() {
    return changes.members();
  }

  /** The index of the last entry applied here. */
  public long appliedIndex() {
    return division().getInfo().getLastAppliedIndex();
  }

  /** The Raft term this member is in. */
  public long term() {
    return division().getInfo().getCurrentTerm();
  }

  /** Changes sent to this member that failed before reaching the log, by reason (each reason, from zero). */
  public void forEachFailedProposal(java.util.function.ObjLongConsumer<String> visitor) {
    proposer.forEachFailure(visitor);
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
  java.util.Collection<RaftPeer> currentPeers() {
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
   * Changes the group's members at runtime: see {@link MemberChanges#changeMembers}.
   */
  @Override
  public List<String> changeMembers(List<String> add, List<String> remove, Duration timeout) throws IOException {
    return changes.changeMembers(add, remove, timeout);
  }

  RaftServer.Division division() {
    try {
      return server.getDivision(GROUP_ID);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Before this member stops: hands its lead over (see {@link MemberChanges#handOverLead}). */
  public void handOverLead(Duration timeout) {
    changes.handOverLead(timeout);
  }

  /** This member is stopping: it records itself down in the log (see {@link MemberChanges#leave}). */
  public void leave(Duration timeout) {
    changes.leave(timeout);
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

  /** Whether {@link #close} has begun. */
  boolean closed() {
    return closed;
  }

  /** The member's timer thread: the watch, retries. */
  SystemScheduler timer() {
    return timer;
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

}
