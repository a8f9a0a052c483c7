package io.roster.server.cluster;

import java.io.IOException;
import java.time.Duration;
import io.roster.proto.cluster.v1.Command;
import io.roster.proto.cluster.v1.MemberDown;
import io.roster.server.cluster.Members.MemberView;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.server.DivisionInfo;
import java.util.List;
import java.util.Map;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The group's members as the admin sees and changes them ({@link Members}), and the hand-over of
 * a stopping member: a change at runtime (the entries checked, each member added asked first
 * through {@link GroupProbe}, the new configuration sent through the log client, the answer told
 * as the admin reads it), the lead handed over and this member recorded down before it stops. It
 * owns no state; the group's configuration is the {@link ClusterNode}'s. Called on the admin's
 * and the stopping thread.
 */
final class MemberChanges {

  private static final Logger log = LoggerFactory.getLogger(MemberChanges.class);

  private final ClusterNode node;
  private final String memberId;
  private final LogClient client;
  private final GroupProbe probe;
  private final Membership membership;
  private final Proposer proposer;
  private final RegistryStateMachine stateMachine;
  private final Duration memberDownAfter;

  MemberChanges(ClusterNode node, String memberId, LogClient client, GroupProbe probe, Membership membership,
      Proposer proposer, RegistryStateMachine stateMachine, Duration memberDownAfter) {
    this.node = node;
    this.memberId = memberId;
    this.client = client;
    this.probe = probe;
    this.membership = membership;
    this.proposer = proposer;
    this.stateMachine = stateMachine;
    this.memberDownAfter = memberDownAfter;
  }

  /** The group's members as this member sees them (see {@link Members#members}). */
  List<MemberView> members() {
    DivisionInfo info = node.division().getInfo();
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
    for (CommitInfoProto c : node.division().getCommitInfos()) {
      commits.put(Peer.member(c.getServer().getId().toStringUtf8()), c.getCommitIndex());
    }
    long top = commits.values().stream().mapToLong(Long::longValue).max().orElse(0);
    String leader = info.getLeaderId() == null ? "" : Peer.member(info.getLeaderId().toString());
    Map<String, RegistryStateMachine.Member> known = stateMachine.members().stream()
        .collect(Collectors.toMap(RegistryStateMachine.Member::id, m -> m));
    List<MemberView> views = new ArrayList<>();
    for (RaftPeer p : node.currentPeers()) {
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
   * for {@link ClusterNode#STAGING_TIMEOUT}, another change in progress), change nothing.
   *
   * @throws IllegalArgumentException naming the entry when one is malformed, already a member, or
   *     not one, or when no member would be left
   * @throws IllegalStateException naming the entry when a member added does not answer, answers as
   *     another member, or holds a configuration of its own; or when this member is not in the group
   * @throws IOException when the group refused the change, or it did not complete in time
   */
  List<String> changeMembers(List<String> add, List<String> remove, Duration timeout) throws IOException {
    if (!node.inGroup()) {
      throw new IllegalStateException("this member (" + memberId + ") is not in the group's configuration: ask a "
          + "member that is");
    }
    Map<String, RaftPeer> next = new java.util.LinkedHashMap<>();
    for (RaftPeer p : node.currentPeers()) {
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
    node.currentPeers().forEach(p -> ids.add(Peer.member(p.getId().toString())));
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
      return "a member added made no progress catching up from the leader for " + ClusterNode.STAGING_TIMEOUT.toSeconds()
          + " s (it stopped, or is not reachable from the leader); nothing changed";
    }
    if (cause instanceof org.apache.ratis.protocol.exceptions.ReconfigurationInProgressException) {
      return "another change of members is in progress; nothing changed, ask again once it is done";
    }
    return "the change did not complete within " + timeout.toSeconds() + " s (" + (cause == null ? "no answer"
        : GroupProbe.shortCause(cause)) + "); if it was still in progress it may yet complete";
  }

  /**
   * Before this member stops: when it leads, hands the lead to the most up-to-date member that
   * answers, so that writes go on without waiting for an election (bounded by {@code timeout}).
   */
  void handOverLead(Duration timeout) {
    if (node.closed() || !node.division().getInfo().isLeader()) {
      return;
    }
    String next = Membership.heir(MemberWatch.role(node.division().getInfo()), memberDownAfter.toMillis());
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
  void leave(Duration timeout) {
    membership.leave();
    if (!node.caughtUp().isDone()) {
      return; // this incarnation was never announced: the log would drop its entries
    }
    try {
      proposer.propose(Command.newBuilder()
          .setMemberDown(MemberDown.newBuilder().setMember(memberId)).build(), true)
          .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      log.debug("Could not record leaving: {}", e.toString());
    }
  }
}
