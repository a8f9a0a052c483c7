package io.roster.server.cluster;

import io.roster.proto.cluster.v1.Batch;
import io.roster.proto.cluster.v1.Command;
import io.roster.proto.cluster.v1.EndStaleOwners;
import io.roster.proto.cluster.v1.MemberDown;
import io.roster.proto.cluster.v1.MemberLoad;
import io.roster.proto.cluster.v1.MemberStarted;
import io.roster.server.model.Owner;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.server.DivisionInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watch of one cluster member: every {@link ClusterNode#WATCH_EVERY}, on the member's timer
 * thread, it reads the facts of the moment (its Raft role and whom it heard from, the members and
 * stale owners the log knows, the server's session count), hands them to the {@link Membership}
 * policy, and carries out the {@link Membership.Effects} it returns: log entries proposed, the
 * server told (decision 93). It owns the member's announcement too ({@code member_started},
 * proposed until the group takes it, and again when the log says this member is down), and tells
 * the server of its owners the log ended. What it reads and proposes through is the {@link
 * ClusterNode}'s.
 */
final class MemberWatch {

  private static final Logger log = LoggerFactory.getLogger(MemberWatch.class);

  private final ClusterNode node;
  private final String incarnation;
  private final Membership membership;
  private final RegistryStateMachine stateMachine;
  private final Proposer proposer;
  private final ClusterNode.Local local;
  private final PeerHandshakes handshakes;
  /** Where clients reach this member, known at {@link #announce}. */
  private volatile String clientAddress = "";
  /** This member's {@code member_started} is being proposed. */
  private volatile boolean announcing;
  /** The watch runs: {@link #announce} started it. */
  private final AtomicBoolean watching = new AtomicBoolean();

  MemberWatch(ClusterNode node, String incarnation, Membership membership, RegistryStateMachine stateMachine, Proposer proposer,
      ClusterNode.Local local, PeerHandshakes handshakes) {
    this.node = node;
    this.incarnation = incarnation;
    this.membership = membership;
    this.stateMachine = stateMachine;
    this.proposer = proposer;
    this.local = local;
    this.handshakes = handshakes;
  }

  /**
   * Tells the member where clients reach it, starts its watch (once) and proposes its {@code
   * member_started} entry.
   */
  void announce(String clientAddress) {
    this.clientAddress = clientAddress;
    if (!watching.getAndSet(true)) {
      membership.started();
      node.timer().schedule(this::watchAndAgain, ClusterNode.WATCH_EVERY);
    }
    proposeStarted();
  }

  /** Proposes this member's {@code member_started} (retried until the group takes it); once applied, it has caught up. */
  void proposeStarted() {
    if (node.closed()) {
      return;
    }
    if (!node.inGroup()) {
      // Not in the group's configuration yet: whatever it proposed would go to a group that has
      // not taken it, and the others would count it a live member before it can serve.
      node.timer().schedule(this::proposeStarted, ClusterNode.WATCH_EVERY);
      return;
    }
    var started = Command.newBuilder().setMemberStarted(MemberStarted.newBuilder()
        .setMember(node.memberId()).setIncarnation(incarnation).setClientAddress(clientAddress)).build();
    announcing = true;
    proposer.<Object>propose(started, true).whenComplete((r, failed) -> {
      announcing = false;
      if (failed != null) {
        log.debug("member_started not taken yet ({}); retrying", failed.toString());
        node.timer().schedule(this::proposeStarted, Duration.ofMillis(500));
      } else if (node.caughtUp().complete(null)) {
        log.info("Cluster member {} caught up with the log (applied index {})", node.memberId(),
            node.appliedIndex());
        local.caughtUp();
        node.timer().execute(this::watch); // says at once whether it can take writes
      }
    });
  }

  /**
   * An entry applied here: the proposer told, and the server told of this member's owners that
   * the log ended.
   */
  void onApplied(Batch batch, List<Object> results) {
    proposer.onApplied(batch, results);
    for (int i = 0; i < batch.getCommandsCount(); i++) {
      var c = batch.getCommands(i);
      if (c.hasEndStaleOwners() && results.get(i) instanceof List<?> ended && !ended.isEmpty()) {
        String mine = node.ownerNode();
        List<Owner> ours = ended.stream().map(Owner.class::cast).filter(o -> o.nodeId().equals(mine)).toList();
        log.info("The log ended {} owners of member {}{}", ended.size(), c.getEndStaleOwners().getMember(),
            ours.isEmpty() ? "" : " (" + ours.size() + " of them sessions here: they are asked to move and redo)");
        if (!ours.isEmpty()) {
          local.ownersEnded(ours, node::suggest);
        }
      }
    }
  }

  /** One period: handshakes tidied, a stall noticed, one watch; then the next period, unless closed. */
  void watchAndAgain() {
    handshakes.cleanUp();
    membership.tick();
    watch();
    if (!node.closed()) {
      node.timer().schedule(this::watchAndAgain, ClusterNode.WATCH_EVERY);
    }
  }

  /** One look at the facts, and what the policy decided carried out. */
  void watch() {
    if (node.closed()) {
      return;
    }
    try {
      carryOut(membership.watch(facts()));
    } catch (RuntimeException e) {
      log.warn("Cluster watch failed; trying again in {} ms", ClusterNode.WATCH_EVERY.toMillis(), e);
    }
  }

  /** The facts of this moment, for the policy. */
  private Membership.Facts facts() {
    DivisionInfo info = node.division().getInfo();
    return new Membership.Facts(node.caughtUp().isDone(), node.inGroup(), role(info), node.currentPeers().size(),
        ClusterNode.members(stateMachine), stateMachine.stale(), local.sessionCount(), announcing);
  }

  /** This member's Raft role as the policy sees it: who it heard from, how long ago. */
  static Membership.Role role(DivisionInfo info) {
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

  /** What the policy decided, carried out in its order: the server told, log entries proposed. */
  private void carryOut(Membership.Effects effects) {
    if (effects.writable() != null) {
      local.writable(effects.writable().reason(), node::suggest);
    }
    if (effects.serving() != null) {
      local.serving(effects.serving().reason());
    }
    if (effects.recordReturn()) {
      proposeStarted();
    }
    for (String member : effects.recordDown()) {
      proposeQuietly(Command.newBuilder().setMemberDown(MemberDown.newBuilder().setMember(member)).build());
    }
    for (Membership.EndStaleOwners end : effects.endStaleOwners()) {
      proposeQuietly(Command.newBuilder().setEndStaleOwners(EndStaleOwners.newBuilder().setMember(end.member())
          .setKeepIncarnation(end.keepIncarnation())).build());
    }
    if (effects.reportLoad() >= 0) {
      proposeQuietly(Command.newBuilder().setMemberLoad(MemberLoad.newBuilder().setMember(node.memberId())
          .setSessions(effects.reportLoad())).build());
    }
    Membership.Shed shed = effects.shed();
    if (shed != null) {
      int asked = local.shed(shed.count(), shed.to());
      log.info("Balance: {} sessions here, mean {}; asked {} to move to {} ({} sessions)", shed.here(),
          String.format(Locale.ROOT, "%.1f", shed.mean()), asked, shed.toMember(), shed.toSessions());
    }
  }

  private void proposeQuietly(Command command) {
    try {
      proposer.propose(command, false).exceptionally(e -> {
        log.debug("Could not propose {}: {}", command.getChangeCase(), e.toString());
        return null;
      });
    } catch (RuntimeException e) {
      log.debug("Could not propose {}: {}", command.getChangeCase(), e.toString());
    }
  }
}
