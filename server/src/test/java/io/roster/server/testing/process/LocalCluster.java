package io.roster.server.testing.process;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.AdminGrpc;
import io.roster.proto.v1.ListConnectionsRequest;
import io.roster.proto.v1.ListMembersRequest;
import io.roster.proto.v1.ListMembersResponse;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.server.testing.TcpProxy;
import io.roster.server.tls.Pki;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcFactory;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;

/**
 * Server processes on 127.0.0.1, 127.0.0.2, ... forming one cluster (three members unless told
 * otherwise), each with free client and peer ports and a temporary data directory of its own;
 * what {@code make cluster} starts. Started by a {@link Builder}; {@link #close()} stops every
 * member (as its {@link ServerLauncher} closes a server), closes the proxies and channels and
 * deletes the data.
 *
 * <p>The peer ports speak mutual TLS, as a cluster must by default (decision 63): the cluster
 * makes a throwaway CA in its temporary directory and gives each member a certificate from it
 * ({@link Builder#peerTls(boolean)} turns that off).
 *
 * <p>{@link Builder#withLinks()} puts every peer link through proxies that can cut it: member
 * {@code i} reaches member {@code j} at a {@link TcpProxy} of its own to {@code j}'s peer port
 * (ids {@code n1..nN} everywhere, addresses per member), so a link {@code i-j} is the proxies
 * {@code i->j} and {@code j->i}. Freezing them makes each side of the link silent to the other
 * with every socket open; healing closes what the freeze held and forwards again.
 *
 * <p>Not thread-safe, except the queries ({@link #view}, {@link #clientIds}, ...).
 */
public final class LocalCluster implements AutoCloseable {

  /** The one group all members form (as ClusterNode names it). */
  public static final RaftGroupId GROUP_ID = RaftGroupId.valueOf(
      UUID.nameUUIDFromBytes("roster-registry".getBytes(StandardCharsets.UTF_8)));

  /** How a cluster starts. */
  public static final class Builder {
    private final ServerLauncher launcher;
    private int size = 3;
    private boolean withLinks;
    private List<String> flags = List.of();
    private String logName;
    private boolean gcLogs;
    private Duration startTimeout;
    private boolean peerTls = true;
    private int spares;
    private boolean named;
    private Set<Integer> byAddress = Set.of();
    private boolean oneClientPort;

    private Builder(ServerLauncher launcher) {
      this.launcher = launcher;
      this.startTimeout = launcher.startTimeout().multipliedBy(2); // members catch up with the log first
    }

    /** The number of members (default 3). */
    public Builder size(int members) {
      this.size = members;
      return this;
    }

    /**
     * The last {@code n} members are spares: not started, and not in the others' {@code --members};
     * {@link #launchSpare} starts one with every member listed, to be added to the group at runtime.
     */
    public Builder spares(int n) {
      this.spares = n;
      return this;
    }

    /**
     * Every member listed by id in every {@code --members} ({@code nK=host:peerPort}, as with
     * links), but for the members of {@code byAddress}: their id is their {@code host:peerPort}.
     */
    public Builder named(int... byAddress) {
      this.named = true;
      this.byAddress = Arrays.stream(byAddress).boxed().collect(Collectors.toUnmodifiableSet());
      return this;
    }

    /**
     * Every member's client port the same number, on its own address (127.0.0.1 up), as behind a
     * DNS name listing every member: {@code name:port} reaches any of them.
     */
    public Builder oneClientPort() {
      this.oneClientPort = true;
      return this;
    }

    /** Every peer link through proxies that can cut it ({@link #freeze}, {@link #isolate}, {@link #heal}). */
    public Builder withLinks() {
      this.withLinks = true;
      return this;
    }

    /**
     * Without peer TLS: every member gets {@code --peer-tls off} and no certificate. By default the
     * cluster has a CA of its own and each member a certificate from it (see {@link #authority()}).
     */
    public Builder peerTls(boolean on) {
      this.peerTls = on;
      return this;
    }

    /** Server flags every member gets after the launcher's. */
    public Builder flags(String... flags) {
      this.flags = List.of(flags);
      return this;
    }

    /**
     * Member {@code k}'s output (k = 1..N) in {@code NAME-nodeK-server.log}, created anew at each
     * launch; without a name every launch of a member writes a file of its own ({@code
     * server-PORT-NANOS.log}).
     */
    public Builder logName(String name) {
      this.logName = name;
      return this;
    }

    /** Each member logs its GC to {@code NAME-nodeK-gc.log} ({@code -Xlog:gc}); needs {@link #logName}. */
    public Builder gcLogs() {
      this.gcLogs = true;
      return this;
    }

    /** How long each member may take to SERVING (default twice the launcher's start timeout). */
    public Builder startTimeout(Duration atMost) {
      this.startTimeout = atMost;
      return this;
    }

    /** Starts every member and waits until each is SERVING (caught up with the log). */
    public LocalCluster start() {
      if (gcLogs && logName == null) {
        throw new IllegalStateException("gcLogs() needs logName()");
      }
      LocalCluster c = new LocalCluster(this);
      try {
        for (int i = 0; i < size - spares; i++) {
          c.nodes[i] = c.launch(i);
        }
        for (int i = 0; i < size - spares; i++) {
          c.nodes[i].awaitServing(startTimeout);
        }
        return c;
      } catch (RuntimeException | Error e) {
        c.close(); // the caller never gets it: no member may outlive the failure
        throw e;
      }
    }
  }

  /** Members' client hosts, 127.0.0.1 up, by member index. */
  public final List<String> hosts;
  /** Members' client ports, by member index. */
  public final List<Integer> ports;
  /** Members' peer ports, by member index. */
  public final List<Integer> peerPorts;
  private final ServerLauncher launcher;
  /** Members started with the cluster; the rest are spares ({@link Builder#spares}). */
  private final int initial;
  /** Whether members are listed by id without links ({@link Builder#named}), and which are not. */
  private final boolean named;
  private final Set<Integer> byAddress;
  private final List<String> flags;
  private final String logName;
  private final boolean gcLogs;
  private final Duration startTimeout;
  private final Path dataRoot;
  /** The cluster's throwaway CA, or null without peer TLS; its files under {@code dataRoot/pki}. */
  private final Pki.Authority authority;
  private final ServerProcess[] nodes;
  private final ManagedChannel[] channels;
  /** links[i][j]: where member i reaches member j's peer port; null without links, and on the diagonal. */
  private final TcpProxy[][] links;

  private LocalCluster(Builder b) {
    launcher = b.launcher;
    initial = b.size - b.spares;
    named = b.named;
    byAddress = b.byAddress;
    flags = b.flags;
    logName = b.logName;
    gcLogs = b.gcLogs;
    startTimeout = b.startTimeout;
    int size = b.size;
    nodes = new ServerProcess[size];
    channels = new ManagedChannel[size];
    links = new TcpProxy[size][size];
    List<String> h = new ArrayList<>();
    List<Integer> p = new ArrayList<>();
    List<Integer> pp = new ArrayList<>();
    int shared = b.oneClientPort ? Ports.free() : 0;
    for (int i = 0; i < size; i++) {
      h.add("127.0.0." + (i + 1));
      p.add(b.oneClientPort ? shared : Ports.free());
      pp.add(Ports.free());
    }
    hosts = List.copyOf(h);
    ports = List.copyOf(p);
    peerPorts = List.copyOf(pp);
    try {
      if (b.withLinks) {
        for (int i = 0; i < size; i++) {
          for (int j = 0; j < size; j++) {
            if (i != j) {
              links[i][j] = new TcpProxy(hosts.get(j), peerPorts.get(j));
            }
          }
        }
      }
      dataRoot = Files.createTempDirectory("roster-cluster");
      authority = b.peerTls ? writePki(dataRoot.resolve("pki"), hosts) : null;
    } catch (IOException e) {
      closeLinks();
      throw new UncheckedIOException(e);
    }
  }

  /**
   * A CA of the cluster's own and a certificate from it for each member, as {@code roster-server.jar
   * pki} makes them: {@code ca.crt}, {@code nodeK.crt} and {@code nodeK.key}. A member's
   * certificate names its host, and 127.0.0.1 where the proxies of {@link Builder#withLinks()}
   * listen for it.
   */
  private static Pki.Authority writePki(Path dir, List<String> hosts) throws IOException {
    Pki.Authority ca = Pki.newAuthority("roster-test-cluster-ca");
    ca.writePem(dir.resolve("ca.crt"), dir.resolve("ca.key"));
    for (int i = 0; i < hosts.size(); i++) {
      ca.issue("node" + (i + 1), List.of(hosts.get(i), "127.0.0.1", "localhost"))
          .writePem(dir.resolve("node" + (i + 1) + ".crt"), dir.resolve("node" + (i + 1) + ".key"));
    }
    return ca;
  }

  /** The cluster's CA, which signed every member's certificate; null without peer TLS. */
  public Pki.Authority authority() {
    return authority;
  }

  /** Member i's peer TLS flags: its certificate, key and the CA; {@code --peer-tls off} without. */
  public List<String> peerTlsFlags(int i) {
    if (authority == null) {
      return List.of("--peer-tls", "off");
    }
    Path dir = dataRoot.resolve("pki");
    return List.of("--peer-tls-cert", dir.resolve("node" + (i + 1) + ".crt").toString(),
        "--peer-tls-key", dir.resolve("node" + (i + 1) + ".key").toString(),
        "--peer-tls-ca", dir.resolve("ca.crt").toString());
  }

  /**
   * Ratis parameters for a client of the group that the members take as one of their own: a
   * certificate from the cluster's CA (none without peer TLS).
   */
  public Parameters memberParameters() {
    Parameters p = new Parameters();
    if (authority != null) {
      Pki.Issued harness = authority.issue("test-harness", List.of("127.0.0.1"));
      GrpcConfigKeys.TLS.setConf(p, new GrpcTlsConfig(harness.privateKey(), harness.certificate(),
          List.of(authority.certificate()), true));
    }
    return p;
  }

  /** The group as every member knows it: its id and each member's id and peer address. */
  public RaftGroup raftGroup() {
    List<RaftPeer> peers = new ArrayList<>();
    for (int k = 0; k < size(); k++) {
      peers.add(RaftPeer.newBuilder().setId(raftId(k)).setAddress(hosts.get(k) + ":" + peerPorts.get(k)).build());
    }
    return RaftGroup.valueOf(GROUP_ID, peers);
  }

  /** The cluster's --members as a member without links gets it: every member's host:peerPort. */
  public String memberList() {
    List<String> m = new ArrayList<>();
    for (int k = 0; k < size(); k++) {
      m.add(hosts.get(k) + ":" + peerPorts.get(k));
    }
    return String.join(",", m);
  }

  /** A cluster started by {@code launcher}'s servers. */
  public static Builder builder(ServerLauncher launcher) {
    return new Builder(launcher);
  }

  /** The number of members. */
  public int size() {
    return nodes.length;
  }

  /**
   * Member i's --members: the same ids everywhere; its peers at its own proxies when linked. The
   * first members list each other; a spare lists every member, itself included.
   */
  private String membersOf(int i) {
    List<String> m = new ArrayList<>();
    for (int k = 0; k < (i < initial ? initial : size()); k++) {
      String address = links[i][k] != null ? links[i][k].address() : hosts.get(k) + ":" + peerPorts.get(k);
      m.add(named(k) ? id(k) + "=" + address : address);
    }
    return String.join(",", m);
  }

  private boolean linked() {
    return size() > 1 && links[0][1] != null;
  }

  /** Whether member k is listed by an id of its own (with links, or {@link Builder#named}). */
  private boolean named(int k) {
    return linked() || (named && !byAddress.contains(k));
  }

  /** Member k's id: nK with links or when named ({@link Builder#named}), else its host:peerPort. */
  public String id(int k) {
    return named(k) ? "n" + (k + 1) : hosts.get(k) + ":" + peerPorts.get(k);
  }

  /** Member k's entry in {@code --members} and in {@code add=}: {@code id=host:peerPort}, or {@code host:peerPort}. */
  public String entry(int k) {
    String address = hosts.get(k) + ":" + peerPorts.get(k);
    return named(k) ? id(k) + "=" + address : address;
  }

  private ServerProcess launch(int i) {
    return launch(i, launcher);
  }

  private ServerProcess launch(int i, ServerLauncher with) {
    List<String> memberFlags = new ArrayList<>(List.of("--peer-port", Integer.toString(peerPorts.get(i)),
        "--members", membersOf(i), "--node-id", named(i) ? id(i) : hosts.get(i),
        "--data-dir", dataRoot.resolve("node" + (i + 1)).toString()));
    memberFlags.addAll(peerTlsFlags(i));
    memberFlags.addAll(flags);
    List<String> jvm = new ArrayList<>();
    Path gcLog = gcLog(i);
    if (gcLog != null) {
      try {
        // One file per run, not rotated: the largest pause can be read from it afterwards.
        Files.deleteIfExists(gcLog);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      jvm.add("-Xlog:gc:file=" + gcLog + ":uptime,level,tags:filecount=0");
    }
    String name = logName == null ? null : logName + "-node" + (i + 1) + "-server";
    return with.launch(name, hosts.get(i), ports.get(i), jvm, memberFlags);
  }

  /** Member {@code i}'s GC log ({@link Builder#gcLogs()}), or null. */
  public Path gcLog(int i) {
    return gcLogs ? launcher.logDir().resolve(logName + "-node" + (i + 1) + "-gc.log") : null;
  }

  /** Cuts the link between members i and j, both ways (withLinks only). */
  public void freeze(int i, int j) {
    links[i][j].freeze();
    links[j][i].freeze();
  }

  /**
   * Partitions members i and j both ways the loud way (withLinks only): their connections are
   * closed and new ones closed as they come, as between hosts that cannot reach each other; {@link
   * #freeze} is the quiet way (a black hole).
   */
  public void partition(int i, int j) {
    links[i][j].drop();
    links[j][i].drop();
  }

  /** Cuts member i off from every other member; its clients still reach it. */
  public void isolate(int i) {
    for (int j = 0; j < size(); j++) {
      if (j != i) {
        freeze(i, j);
      }
    }
  }

  /** Heals every cut link. */
  public void heal() {
    for (TcpProxy[] row : links) {
      for (TcpProxy p : row) {
        if (p != null) {
          p.heal();
        }
      }
    }
  }

  /** Starts spare member {@code i} ({@link Builder#spares}) with every member listed; does not wait. */
  public ServerProcess launchSpare(int i) {
    if (i < initial || nodes[i] != null) {
      throw new IllegalStateException("member " + i + " is not a spare that has not started");
    }
    nodes[i] = launch(i);
    return nodes[i];
  }

  /** Starts member {@code i} again (after a stop or kill) with its data; does not wait. */
  public ServerProcess relaunch(int i) {
    nodes[i] = launch(i, launcher);
    return nodes[i];
  }

  /**
   * Starts member {@code i} again with its data from {@code other}'s jar (a rolling upgrade: the
   * cluster was started from an older one); does not wait.
   */
  public ServerProcess relaunch(int i, ServerLauncher other) {
    nodes[i] = launch(i, other);
    return nodes[i];
  }

  /** Starts member {@code i} again (after a stop or kill) with its data; waits until SERVING. */
  public Duration restart(int i) {
    return relaunch(i).awaitServing(startTimeout);
  }

  /** Member {@code i}'s process (the latest, after a restart). */
  public ServerProcess node(int i) {
    return nodes[i];
  }

  /** The client address of member {@code i}. */
  public String address(int i) {
    return hosts.get(i) + ":" + ports.get(i);
  }

  /** Every member's client address, as an SDK server list, starting with member {@code first}. */
  public String servers(int first) {
    List<String> all = new ArrayList<>();
    for (int k = 0; k < size(); k++) {
      all.add(address((first + k) % size()));
    }
    return String.join(",", all);
  }

  /** Admin/ListMembers as member {@code i} answers it. */
  public ListMembersResponse members(int i) {
    return AdminGrpc.newBlockingStub(channel(i)).withDeadlineAfter(5, TimeUnit.SECONDS)
        .listMembers(ListMembersRequest.getDefaultInstance());
  }

  /**
   * Member i's registry view of a service, asked over gRPC (QueryInstances, no SDK cache): its
   * instances as sorted "ip:port"; null when the member does not answer.
   */
  public List<String> view(int i, String service) {
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
  public List<List<String>> views(String service) {
    List<List<String>> all = new ArrayList<>();
    for (int i = 0; i < size(); i++) {
      all.add(view(i, service));
    }
    return all;
  }

  /** The client ids of the live sessions on member i (Admin/ListConnections); empty when it does not answer. */
  public Set<String> clientIds(int i) {
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
   * The ephemeral instances the live sessions on member i own, summed per client id
   * (Admin/ListConnections); empty when it does not answer.
   */
  public Map<String, Integer> instancesByClient(int i) {
    Map<String, Integer> owned = new HashMap<>();
    try {
      for (int page = 1; ; page++) {
        var r = AdminGrpc.newBlockingStub(channel(i)).withDeadlineAfter(2, TimeUnit.SECONDS)
            .listConnections(ListConnectionsRequest.newBuilder().setPageNo(page).setPageSize(100).build());
        r.getConnectionsList().forEach(c -> owned.merge(c.getClientId(), c.getInstanceCount(), Integer::sum));
        if (r.getConnectionsCount() == 0 || page * 100 >= r.getTotal()) {
          return owned;
        }
      }
    } catch (StatusRuntimeException e) {
      return Map.of();
    }
  }

  /**
   * The member that says it leads the Raft group (asked over the peer ports with Ratis's group
   * info), or -1 when none does now.
   */
  public int leader() {
    RaftGroup group = raftGroup();
    RaftProperties props = new RaftProperties();
    RaftClientConfigKeys.Rpc.setRequestTimeout(props, TimeDuration.valueOf(2, TimeUnit.SECONDS));
    try (RaftClient c = RaftClient.newBuilder().setProperties(props).setRaftGroup(group)
        .setRetryPolicy(RetryPolicies.noRetry())
        .setClientRpc(new GrpcFactory(memberParameters()).newRaftClientRpc(ClientId.randomId(), props)).build()) {
      for (int k = 0; k < size(); k++) {
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

  /** A plaintext channel to member {@code i}'s client port, made once; closed with the cluster. */
  public synchronized ManagedChannel channel(int i) {
    if (channels[i] == null) {
      channels[i] = NettyChannelBuilder.forAddress(hosts.get(i), ports.get(i)).usePlaintext().build();
    }
    return channels[i];
  }

  /** The last {@code lines} lines of every member's output, each under its address and log file. */
  public String logTails(int lines) {
    return Arrays.stream(nodes).filter(Objects::nonNull)
        .map(n -> "--- " + n.address() + " (" + n.log.toAbsolutePath() + ") ---\n" + n.tail(lines))
        .collect(Collectors.joining("\n"));
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

  /**
   * Stops every member as its launcher closes a server (all SIGTERMed together first when it
   * grants a grace), then closes the proxies and channels and deletes the data. Interrupted, it
   * still kills every member, and leaves the thread interrupted.
   */
  @Override
  public void close() {
    boolean interrupted = false;
    try {
      if (!launcher.closeGrace().isZero()) {
        for (ServerProcess n : nodes) {
          if (n != null) {
            n.terminate();
          }
        }
      }
      for (ServerProcess n : nodes) {
        if (n != null) {
          try {
            n.close();
          } catch (InterruptedException e) {
            interrupted = true; // killed anyway; the others still to close
          }
        }
      }
    } finally {
      closeLinks();
      for (ManagedChannel ch : channels) {
        if (ch != null) {
          ch.shutdownNow();
        }
      }
      try (var files = Files.walk(dataRoot)) {
        files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      } catch (IOException ignored) {
        // Temp files only.
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
