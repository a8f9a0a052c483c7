package io.roster.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Three server processes on 127.0.0.1, 127.0.0.2 and 127.0.0.3 forming one cluster, each with a
 * data directory of its own; what `make cluster` starts, with free ports.
 */
final class LocalCluster implements AutoCloseable {

  static final int SIZE = 3;

  final List<String> hosts = new ArrayList<>();
  final List<Integer> ports = new ArrayList<>();
  final List<Integer> peerPorts = new ArrayList<>();
  final String members;
  private final Path dataRoot;
  private final String[] extraFlags;
  private final ServerProcess[] nodes = new ServerProcess[SIZE];

  private LocalCluster(String... extraFlags) {
    this.extraFlags = extraFlags;
    for (int i = 0; i < SIZE; i++) {
      hosts.add("127.0.0." + (i + 1));
      ports.add(Ports.free());
      peerPorts.add(Ports.free());
    }
    List<String> m = new ArrayList<>();
    for (int i = 0; i < SIZE; i++) {
      m.add(hosts.get(i) + ":" + peerPorts.get(i));
    }
    members = String.join(",", m);
    try {
      dataRoot = Files.createTempDirectory("roster-cluster");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Starts three members and waits until every one is SERVING (caught up with the log). */
  static LocalCluster start(String... extraFlags) {
    LocalCluster c = new LocalCluster(extraFlags);
    for (int i = 0; i < SIZE; i++) {
      c.nodes[i] = c.launch(i);
    }
    for (int i = 0; i < SIZE; i++) {
      c.nodes[i].awaitServing(Timing.seconds(60));
    }
    return c;
  }

  private ServerProcess launch(int i) {
    List<String> flags = new ArrayList<>(List.of("--peer-port", Integer.toString(peerPorts.get(i)),
        "--members", members, "--node-id", hosts.get(i), "--data-dir", dataRoot.resolve("node" + (i + 1)).toString()));
    flags.addAll(List.of(extraFlags));
    return ServerProcess.launch(hosts.get(i), ports.get(i), flags.toArray(String[]::new));
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
    io.grpc.ManagedChannel ch = io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder
        .forAddress(hosts.get(i), ports.get(i)).usePlaintext().build();
    try {
      return io.roster.proto.v1.AdminGrpc.newBlockingStub(ch).withDeadlineAfter(5, java.util.concurrent.TimeUnit.SECONDS)
          .listMembers(io.roster.proto.v1.ListMembersRequest.getDefaultInstance());
    } finally {
      ch.shutdownNow();
    }
  }

  String logs() {
    return java.util.Arrays.stream(nodes).filter(n -> n != null)
        .map(n -> "--- " + n.address() + " ---\n" + n.output()).collect(Collectors.joining("\n"));
  }

  @Override
  public void close() throws InterruptedException {
    for (ServerProcess n : nodes) {
      if (n != null) {
        n.close();
      }
    }
    try (var files = Files.walk(dataRoot)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException ignored) {
      // Temp files only.
    }
  }
}
