package io.roster.it;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.AdminGrpc;
import io.roster.proto.v1.ListConnectionsRequest;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.server.testing.TcpProxy;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcFactory;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Three server processes on 127.0.0.1, 127.0.0.2 and 127.0.0.3 forming one cluster, each with a
 * data directory of its own; what `make cluster` starts, with free ports.
 *
 * <p>{@link #startWithLinks} puts every peer link through proxies that can cut it: member
 * {@code i} reaches member {@code j} at a {@link TcpProxy} of its own to {@code j}'s peer port
 * (ids {@code n1..n3} everywhere, addresses per member), so a link {@code i-j} is the proxies
 * {@code i->j} and {@code j->i}. Freezing them makes each side of the link silent to the other
 * with every socket open; healing closes what the freeze held and forwards again.
 */
final class LocalCluster implements AutoCloseable {

  static final int SIZE = 3;

  final List<String> hosts = new ArrayList<>();
  final List<Integer> ports = new ArrayList<>();
  final List<Integer> peerPorts = new ArrayList<>();
  private final Path dataRoot;
  private final String[] extraFlags;
  private final ServerProcess[] nodes = new ServerProcess[SIZE];
  private final ManagedChannel[] channels = new ManagedChannel[SIZE];
  /** links[i][j]: where member i reaches member j's peer port; null without links, and on the diagonal. */
  private final TcpProxy[][] links = new TcpProxy[SIZE][SIZE];

  private LocalCluster(boolean withLinks, String... extraFlags) {
    this.extraFlags = extraFlags;
    for (int i = 0; i < SIZE; i++) {
      hosts.add("127.0.0." + (i + 1));
      ports.add(Ports.free());
      peerPorts.add(Ports.free());
    }
    try {
      if (withLinks) {
        for (int i = 0; i < SIZE; i++) {
          for (int j = 0; j < SIZE; j++) {
            if (i != j) {
              links[i][j] = new TcpProxy(hosts.get(j), peerPorts.get(j));
            }
          }
        }
      }
      dataRoot = Files.createTempDirectory("roster-cluster");
    } catch (IOException e) {
      closeLinks();
    for (ManagedChannel ch : channels) {
      if (ch != null) {
        ch.shutdownNow();
      }
    }
      throw new UncheckedIOException(e);
    }
  }

  /** Starts three members and waits until every one is SERVING (caught up with the log). */
  static LocalCluster start(String... extraFlags) {
    return start(false, extraFlags);
  }

  /** As {@link #start}, with every peer link through proxies that can cut it. */
  static LocalCluster startWithLinks(String... extraFlags) {
    return start(true, extraFlags);
  }

  private static LocalCluster start(boolean withLinks, String... extraFlags) {
    LocalCluster c = new LocalCluster(withLinks, extraFlags);
    try {
      for (int i = 0; i < SIZE; i++) {
        c.nodes[i] = c.launch(i);
      }
      for (int i = 0; i < SIZE; i++) {
        c.nodes[i].awaitServing(Timing.seconds(60));
      }
      return c;
    } catch (RuntimeException | Error e) {
      try {
        c.close(); // the caller never gets it: no member may outlive the test
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
      }
      throw e;
    }
  }

  /** Member i's --members: the same ids everywhere; its peers at its own proxies when linked. */
  private String membersOf(int i) {
    List<String> m = new ArrayList<>();
    for (int k = 0; k < SIZE; k++) {
      String address = links[i][k] != null ? links[i][k].address() : hosts.get(k) + ":" + peerPorts.get(k);
      m.add(linked() ? id(k) + "=" + address : address);
    }
    return String.join(",", m);
  }

  private boolean linked() {
    return links[0][1] != null;
  }

  /** Member k's id: n1..n3 with links, else its host:peerPort. */
  String id(int k) {
    return linked() ? "n" + (k + 1) : hosts.get(k) + ":" + peerPorts.get(k);
  }

  private ServerProcess launch(int i) {
    List<String> flags = new ArrayList<>(List.of("--peer-port", Integer.toString(peerPorts.get(i)),
        "--members", membersOf(i), "--node-id", linked() ? id(i) : hosts.get(i),
        "--data-dir", dataRoot.resolve("node" + (i + 1)).toString()));
    flags.addAll(List.of(extraFlags));
    return ServerProcess.launch(hosts.get(i), ports.get(i), flags.toArray(String[]::new));
  }

  /** Cuts the link between members i and j, both ways (startWithLinks only). */
  void freeze(int i, int j) {
    links[i][j].freeze();
    links[j][i].freeze();
  }

  /** Cuts member i off from every other member; its clients still reach it. */
  void isolate(int i) {
    for (int j = 0; j < SIZE; j++) {
      if (j != i) {
        freeze(i, j);
      }
    }
  }

  /** Heals every cut link. */
  void heal() {
    for (TcpProxy[] row : links) {
      for (TcpProxy p : row) {
        if (p != null) {
          p.heal();
        }
      }
    }
  }

  /** Starts member {@code i} again (after a stop or kill) with its data; does not wait. */
  ServerProcess relaunch(int i) {
    nodes[i] = launch(i);
    return nodes[i];
  }

  /** Starts member {@code i} again (after a stop or kill) with its data; waits until SERVING. */
  Duration restart(int i) {
    nodes[i] = launch(i);
    return nodes[i].awaitServing(Timing.seconds(60));
  }

  ServerProcess node(int i) {
    return nodes[i];
  }

  /** The client address of member {@code i}. */
  String address(int i) {
    return hosts.get(i) + ":" + ports.get(i);
  }

  /** Every member's client address, as an SDK server list, starting with member {@code first}. */
  String servers(int first) {
    List<String> all = new ArrayList<>();
    for (int k = 0; k < SIZE; k++) {
      all.add(address((first + k) % SIZE));
    }
    return String.join(",", all);
  }

  /** Admin/ListMembers as member {@code i} answers it. */
  io.roster.proto.v1.ListMembersResponse members(int i) {
    return AdminGrpc.newBlockingStub(channel(i)).withDeadlineAfter(5, TimeUnit.SECONDS)
        .listMembers(io.roster.proto.v1.ListMembersRequest.getDefaultInstance());
  }

  /**
   * Member i's registry view of a service, asked over gRPC (QueryInstances, no SDK cache): its
   * instances as sorted "ip:port"; null when the member does not answer.
   */
  List<String> view(int i, String service) {
    try {
      var info = RegistryGrpc.newBlockingStub(channel(i)).withDeadlineAfter(2, TimeUnit.SECONDS)
          .queryInstances(QueryInstancesRequest.newBuilder().setService(ServiceKey.newBuilder().setName(service)).build())
          .getServiceInfo();
      return info.getInstancesList().stream().map(x -> x.getIp() + ":" + x.getPort()).sorted().toList();
    } catch (StatusRuntimeException e) {
      return null;
    }
  }

  /** Every member's view (see {@link #view}), by member index. */
  List<List<String>> views(String service) {
    List<List<String>> all = new ArrayList<>();
    for (int i = 0; i < SIZE; i++) {
      all.add(view(i, service));
    }
    return all;
  }

  /** The client ids of the live sessions on member i (Admin/ListConnections); empty when it does not answer. */
  Set<String> clientIds(int i) {
    Set<String> ids = new HashSet<>();
    try {
      for (int page = 1; ; page++) {
        var r = AdminGrpc.newBlockingStub(channel(i)).withDeadlineAfter(2, TimeUnit.SECONDS)
            .listConnections(ListConnectionsRequest.newBuilder().setPageNo(page).setPageSize(100).build());
        r.getConnectionsList().forEach(c -> ids.add(c.getClientId()));
        if (r.getConnectionsCount() == 0 || page * 100 >= r.getTotal()) {
          return ids;
        }
      }
    } catch (StatusRuntimeException e) {
      return Set.of();
    }
  }

  /**
   * The member that says it leads the Raft group (asked over the peer ports with Ratis's group
   * info), or -1 when none does now.
   */
  int leader() {
    List<RaftPeer> peers = new ArrayList<>();
    for (int k = 0; k < SIZE; k++) {
      peers.add(RaftPeer.newBuilder().setId(raftId(k)).setAddress(hosts.get(k) + ":" + peerPorts.get(k)).build());
    }
    RaftGroup group = RaftGroup.valueOf(RaftGroupId.valueOf(
        UUID.nameUUIDFromBytes("roster-registry".getBytes(StandardCharsets.UTF_8))), peers);
    RaftProperties props = new RaftProperties();
    RaftClientConfigKeys.Rpc.setRequestTimeout(props, TimeDuration.valueOf(2, TimeUnit.SECONDS));
    try (RaftClient c = RaftClient.newBuilder().setProperties(props).setRaftGroup(group)
        .setRetryPolicy(RetryPolicies.noRetry())
        .setClientRpc(new GrpcFactory(new Parameters()).newRaftClientRpc(ClientId.randomId(), props)).build()) {
      for (int k = 0; k < SIZE; k++) {
        try {
          if (c.getGroupManagementApi(raftId(k)).info(group.getGroupId()).getRoleInfoProto().getRole()
              == RaftPeerRole.LEADER) {
            return k;
          }
        } catch (IOException notNow) {
          // Down, or not answering: not the leader for us.
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return -1;
  }

  /** Member k's Raft peer id: its id with ':' as '_' (as ClusterNode names it). */
  private RaftPeerId raftId(int k) {
    return RaftPeerId.valueOf(id(k).replace(':', '_'));
  }

  private synchronized ManagedChannel channel(int i) {
    if (channels[i] == null) {
      channels[i] = NettyChannelBuilder.forAddress(hosts.get(i), ports.get(i)).usePlaintext().build();
    }
    return channels[i];
  }

  String logs() {
    return java.util.Arrays.stream(nodes).filter(n -> n != null)
        .map(n -> "--- " + n.address() + " ---\n" + n.output()).collect(Collectors.joining("\n"));
  }

  private void closeLinks() {
    for (TcpProxy[] row : links) {
      for (TcpProxy p : row) {
        if (p != null) {
          try {
            p.close();
          } catch (IOException ignored) {
            // Loopback sockets only.
          }
        }
      }
    }
  }

  @Override
  public void close() throws InterruptedException {
    for (ServerProcess n : nodes) {
      if (n != null) {
        n.close();
      }
    }
    closeLinks();
    try (var files = Files.walk(dataRoot)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException ignored) {
      // Temp files only.
    }
  }
}
