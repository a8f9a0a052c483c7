package io.roster.server.cluster;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcFactory;
import org.apache.ratis.proto.RaftProtos.RaftPeerProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;
import org.jspecify.annotations.Nullable;

/**
 * Asks a member over its peer port what it knows of the group (Ratis's group info): its own id
 * and the group's configuration as it has it. A member on its first start asks the others
 * whether the group exists already (then it waits to be added, rather than form a group of its
 * own); a change of members asks each member it adds before it asks the group (decision 86).
 *
 * <p>Each question is bounded by its timeout and never retried; it speaks the member's own peer
 * TLS. Blocking; thread-safe (nothing shared between questions).
 */
final class GroupProbe {

  /** How long one question may take: a member that has not answered by then is taken for absent. */
  static final Duration TIMEOUT = Duration.ofSeconds(3);

  /**
   * What a member said.
   *
   * @param id its own member id
   * @param members the member ids of the group's configuration as it has it (empty: it is in no
   *     group yet, a member waiting to be added)
   * @param peers the same members with their addresses
   */
  record Answer(String id, List<String> members, List<RaftPeer> peers) {
    /** Whether the configuration it has lists {@code member}. */
    boolean lists(String member) {
      return members.contains(member);
    }
  }

  private final RaftProperties props;
  private final Parameters parameters;

  /**
   * @param props this member's Ratis settings
   * @param parameters its peer TLS (as its log client's)
   */
  GroupProbe(RaftProperties props, Parameters parameters) {
    this.props = props;
    this.parameters = parameters;
  }

  /**
   * Asks {@code peer} (reached at its address, asked as {@code peer.id()}), within {@code timeout}.
   *
   * @throws IOException when it does not answer in time (not started, not reachable, its TLS
   *     refused), or answers that it has no such group
   */
  Answer ask(Peer peer, Duration timeout) throws IOException {
    RaftProperties p = new RaftProperties(props);
    RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(timeout.toMillis(), TimeUnit.MILLISECONDS));
    RaftPeer target = RaftPeer.newBuilder().setId(Peer.peerId(peer.id())).setAddress(peer.address()).build();
    ClientId id = ClientId.randomId();
    CompletableFuture<GroupInfoReply> asked = new CompletableFuture<>();
    try (RaftClient c = RaftClient.newBuilder().setProperties(p)
        .setRaftGroup(RaftGroup.valueOf(ClusterNode.GROUP_ID, target)).setClientId(id)
        .setRetryPolicy(RetryPolicies.noRetry())
        .setClientRpc(new GrpcFactory(parameters).newRaftClientRpc(id, p)).build()) {
      // The blocking call on a thread of its own, so that the bound holds whatever the transport does.
      Thread t = new Thread(() -> {
        try {
          asked.complete(c.getGroupManagementApi(target.getId()).info(ClusterNode.GROUP_ID));
        } catch (IOException | RuntimeException e) {
          asked.completeExceptionally(e);
        }
      }, "roster-group-probe");
      t.setDaemon(true);
      t.start();
      GroupInfoReply reply;
      try {
        reply = asked.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        throw new IOException("no answer within " + timeout.toMillis() + " ms", e);
      } catch (ExecutionException e) {
        Throwable cause = e.getCause() == null ? e : e.getCause();
        throw cause instanceof IOException io ? io : new IOException(cause.toString(), cause);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted", e);
      }
      return answer(reply);
    }
  }

  /** A failure in a few words for an operator: its innermost cause's message, on one line, at most 200 characters. */
  static String shortCause(Throwable failure) {
    Throwable t = failure;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    String text = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    text = text.lines().findFirst().orElse("").strip();
    return text.length() > 200 ? text.substring(0, 200) + "..." : text;
  }

  private static Answer answer(GroupInfoReply reply) {
    String self = Peer.member(reply.getRoleInfoProto().getSelf().getId().toStringUtf8());
    List<String> members = new ArrayList<>();
    List<RaftPeer> peers = new ArrayList<>();
    reply.getConf().ifPresent(conf -> {
      for (RaftPeerProto p : conf.getPeersList()) {
        members.add(Peer.member(p.getId().toStringUtf8()));
        peers.add(RaftPeer.newBuilder().setId(RaftPeerId.valueOf(p.getId())).setAddress(p.getAddress()).build());
      }
    });
    return new Answer(self, List.copyOf(members), List.copyOf(peers));
  }

  /**
   * How a member starting on an empty Raft storage finds its group: by asking the other members
   * of {@code --members} (all at once, each within {@link #TIMEOUT}).
   *
   * @return the configuration to start with: a configuration that lists {@code self} when a
   *     member has one (the group has it already: a member replaced on an empty data directory);
   *     an empty one when members answered with a configuration without it (the group exists: it
   *     waits to be added); null when none answered with a configuration (a new group, formed
   *     from {@code --members})
   */
  @Nullable List<RaftPeer> firstStart(String self, List<Peer> others) {
    List<CompletableFuture<@Nullable Answer>> asked = new ArrayList<>();
    for (Peer other : others) {
      CompletableFuture<@Nullable Answer> f = new CompletableFuture<>();
      Thread t = new Thread(() -> {
        try {
          f.complete(ask(other, TIMEOUT));
        } catch (IOException | RuntimeException e) {
          f.complete(null);
        }
      }, "roster-group-probe-" + other.id());
      t.setDaemon(true);
      t.start();
      asked.add(f);
    }
    boolean groupExists = false;
    for (CompletableFuture<@Nullable Answer> f : asked) {
      Answer a = f.join();
      if (a == null || a.members().isEmpty()) {
        continue; // absent, or itself waiting to be added
      }
      if (a.lists(self)) {
        return a.peers();
      }
      groupExists = true;
    }
    return groupExists ? List.of() : null;
  }
}
