package io.roster.server.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
  static final Duration TIMEOUT = Duration.ofSeconds(5);
  /**
   * How long a member on its first start keeps asking another member that is listening but has
   * not answered (a loaded machine, a JVM still starting): only one that nothing listens for, or
   * that has not answered by then, is taken for absent.
   */
  static final Duration FIRST_START_PATIENCE = Duration.ofSeconds(20);
  /** How soon a member that is listening but did not answer is asked again, on a first start. */
  private static final Duration ASK_AGAIN_AFTER = Duration.ofMillis(250);
  private static final Logger log = LoggerFactory.getLogger(GroupProbe.class);

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

  /**
   * What the reply says: the group as the member has it (its configuration's peers; empty for a
   * member started in no configuration), else the configuration the reply carries.
   */
  private static Answer answer(GroupInfoReply reply) {
    String self = Peer.member(reply.getRoleInfoProto().getSelf().getId().toStringUtf8());
    List<String> members = new ArrayList<>();
    List<RaftPeer> peers = new ArrayList<>();
    for (RaftPeer p : reply.getGroup().getPeers()) {
      members.add(Peer.member(p.getId().toString()));
      peers.add(p);
    }
    if (peers.isEmpty()) {
      reply.getConf().ifPresent(conf -> {
        for (RaftPeerProto p : conf.getPeersList()) {
          members.add(Peer.member(p.getId().toStringUtf8()));
          peers.add(RaftPeer.newBuilder().setId(RaftPeerId.valueOf(p.getId())).setAddress(p.getAddress()).build());
        }
      });
    }
    return new Answer(self, List.copyOf(members), List.copyOf(peers));
  }

  /**
   * How a member starting on an empty Raft storage finds its group: by asking the other members
   * of {@code --members}, all at once, each within {@link #TIMEOUT}, again while it listens but
   * has not answered, for at most {@link #FIRST_START_PATIENCE}. What each answered is logged
   * (one line per member, at start).
   *
   * @return the configuration to start with: a configuration that lists {@code self} when a
   *     member has one (the group has it already: a member replaced on an empty data directory);
   *     an empty one when members answered with a configuration without it (the group exists: it
   *     waits to be added); null when none answered with a configuration (a new group, formed
   *     from {@code --members})
   */
  @Nullable List<RaftPeer> firstStart(String self, List<Peer> others) {
    io.roster.server.time.Deadline deadline = io.roster.server.time.Deadline.after(FIRST_START_PATIENCE);
    List<CompletableFuture<@Nullable Answer>> asked = new ArrayList<>();
    for (Peer other : others) {
      CompletableFuture<@Nullable Answer> f = new CompletableFuture<>();
      Thread t = new Thread(() -> f.complete(patiently(other, deadline)), "roster-group-probe-" + other.id());
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

  /** Asks {@code other} until it answers, nothing listens for it, or {@code deadline} passes; null when it did not answer. */
  private @Nullable Answer patiently(Peer other, io.roster.server.time.Deadline deadline) {
    while (true) {
      try {
        Answer a = ask(other, TIMEOUT);
        log.info("Member {} answers: its group's configuration {}", other.id(),
            a.members().isEmpty() ? "is empty (it waits to be added)" : "lists " + a.members());
        return a;
      } catch (IOException | RuntimeException e) {
        if (refused(e) || deadline.passed()) {
          log.info("Member {} does not answer ({}): taken for absent", other.id(), shortCause(e));
          return null;
        }
      }
      // Listening, but no answer yet: asked again shortly (start-up only, one thread per member).
      java.util.concurrent.locks.LockSupport.parkNanos(ASK_AGAIN_AFTER.toNanos());
    }
  }

  /** Whether nothing listens at the address asked (the connection was refused). */
  private static boolean refused(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof java.net.ConnectException || String.valueOf(t.getMessage()).contains("Connection refused")) {
        return true;
      }
    }
    return false;
  }

  /**
   * The group the Raft server of member {@code self} starts in. On a storage that holds a configuration (any
   * start but the first) Ratis reads it from there, whatever this says. On the first start it
   * asks the other members of {@code --members} ({@link #firstStart}): the group's
   * configuration when it lists this member already (a member replaced on an empty data
   * directory); no configuration at all when the group exists without it, so that it runs no
   * election (the others would tell it to shut down) and waits to be added; {@code --members}
   * when nobody answers, a new cluster.
   */
  RaftGroup startGroup(RaftGroup group, Peer self, List<String> members, Path dataDir) {
    String memberId = self.id();
    Path storage = io.roster.server.store.DataDir.raft(dataDir, memberId).resolve(ClusterNode.GROUP_ID.getUuid().toString()).resolve("current");
    if (holdsConfiguration(storage)) {
      return group;
    }
    List<Peer> others = Peer.all(members).stream().filter(p -> !p.id().equals(memberId)).toList();
    List<RaftPeer> found = others.isEmpty() ? null : firstStart(memberId, others);
    if (found == null) {
      log.info("Cluster member {} starts on an empty data directory and no other member answers: it forms the group "
          + "of --members {}", memberId, members);
      return group;
    }
    if (found.isEmpty()) {
      log.info("Cluster member {} starts on an empty data directory, and the group exists without it: it waits, not "
          + "serving, until a member adds it (POST /roster/v1/admin/members?add={} on any member; docs/cluster.md)",
          memberId, self.id().equals(self.address()) ? self.address() : self.id() + "=" + self.address());
      return RaftGroup.valueOf(ClusterNode.GROUP_ID);
    }
    log.info("Cluster member {} starts on an empty data directory; the group lists it already: it catches up from the "
        + "leader", memberId);
    return RaftGroup.valueOf(ClusterNode.GROUP_ID, found);
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
}
