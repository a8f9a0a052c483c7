package io.roster.bench;

import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * Three Roster servers from the built jar forming one cluster, as the integration tests'
 * LocalCluster starts them: node {@code i} (0-based) listens on {@code 127.0.0.(i+1)} with free
 * client and peer ports and a temporary data directory of its own. Each server process writes
 * its GC log ({@code -Xlog:gc}) next to its output, so the largest pause can be read afterwards.
 *
 * <p>Not thread-safe: one workload thread starts, kills and closes it.
 */
final class LocalCluster implements AutoCloseable {

  static final int SIZE = 3;

  /** One member process. */
  static final class Node {
    final int index;
    final String host;
    final int port;
    final int peerPort;
    final Path log;
    final Path gcLog;
    Process process;

    Node(int index, String host, int port, int peerPort, Path log, Path gcLog) {
      this.index = index;
      this.host = host;
      this.port = port;
      this.peerPort = peerPort;
      this.log = log;
      this.gcLog = gcLog;
    }

    String address() {
      return host + ":" + port;
    }

    /** The Raft peer id Ratis reports for this member (':' carried as '_'). */
    String raftId() {
      return host + "_" + peerPort;
    }

    long pid() {
      return process.pid();
    }

    boolean alive() {
      return process.isAlive();
    }

    long rssBytes() {
      return LocalServer.rssBytes(pid());
    }

    long cpuMillis() {
      return LocalServer.cpuMillis(pid());
    }
  }

  final List<Node> nodes = new ArrayList<>();
  private final Path dataRoot;

  private LocalCluster(Path dataRoot) {
    this.dataRoot = dataRoot;
  }

  /**
   * Starts the three members and returns once every one reports SERVING (caught up with the
   * log). {@code name} prefixes the log files in {@code logDir}.
   */
  static LocalCluster start(Path jar, List<String> jvmFlags, Path logDir, String name, List<String> serverFlags) {
    LocalCluster c;
    try {
      Files.createDirectories(logDir);
      c = new LocalCluster(Files.createTempDirectory("roster-bench-cluster"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<String> members = new ArrayList<>();
    for (int i = 0; i < SIZE; i++) {
      String host = "127.0.0." + (i + 1);
      Node n = new Node(i, host, LocalServer.freePort(), LocalServer.freePort(),
          logDir.resolve(name + "-node" + (i + 1) + "-server.log"), logDir.resolve(name + "-node" + (i + 1) + "-gc.log"));
      c.nodes.add(n);
      members.add(host + ":" + n.peerPort);
    }
    try {
      for (Node n : c.nodes) {
        List<String> jvm = new ArrayList<>(jvmFlags);
        // One file per run, not rotated: the largest pause is read from it afterwards.
        Files.deleteIfExists(n.gcLog);
        jvm.add("-Xlog:gc:file=" + n.gcLog + ":uptime,level,tags:filecount=0");
        List<String> flags = new ArrayList<>(List.of("--peer-port", Integer.toString(n.peerPort),
            "--members", String.join(",", members), "--node-id", n.host,
            "--data-dir", c.dataRoot.resolve("node" + (n.index + 1)).toString()));
        flags.addAll(serverFlags);
        n.process = LocalServer.launch(jar, jvm, n.host, n.port, flags, n.log);
      }
      for (Node n : c.nodes) {
        LocalServer.awaitServing(n.process, n.host, n.port, n.log, Duration.ofSeconds(90));
      }
    } catch (IOException | RuntimeException e) {
      c.close();
      throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
    }
    return c;
  }

  Node node(int i) {
    return nodes.get(i);
  }

  /** Every member's client address as an SDK server list, starting with member {@code first}. */
  String servers(int first) {
    List<String> all = new ArrayList<>();
    for (int k = 0; k < SIZE; k++) {
      all.add(nodes.get((first + k) % SIZE).address());
    }
    return String.join(",", all);
  }

  /**
   * The index of the member the Raft group follows as leader, as a live member's Ratis JMX bean
   * ({@code Ratis:service=RaftServer}, attribute {@code LeaderId}) says; -1 when no live member
   * knows one. Attaches to the server JVM (same user) and starts its local management agent.
   */
  int leader() {
    for (Node n : nodes) {
      if (!n.alive()) {
        continue;
      }
      try {
        VirtualMachine vm = VirtualMachine.attach(Long.toString(n.pid()));
        String url;
        try {
          url = vm.startLocalManagementAgent();
        } finally {
          vm.detach();
        }
        try (JMXConnector jmx = JMXConnectorFactory.connect(new JMXServiceURL(url))) {
          MBeanServerConnection s = jmx.getMBeanServerConnection();
          for (ObjectName name : s.queryNames(new ObjectName("Ratis:service=RaftServer,*"), null)) {
            String leader = String.valueOf(s.getAttribute(name, "LeaderId"));
            for (Node m : nodes) {
              if (m.raftId().equals(leader)) {
                return m.index;
              }
            }
          }
        }
      } catch (Exception e) {
        // try the next member
      }
    }
    return -1;
  }

  /** SIGKILL member {@code i}; returns once the process is gone. */
  void kill9(int i) throws InterruptedException {
    Process p = nodes.get(i).process;
    p.destroyForcibly();
    p.waitFor();
  }

  private static final Pattern PAUSE = Pattern.compile("Pause.*?(\\d+(?:\\.\\d+)?)ms\\s*$");

  /**
   * The largest GC pause in member {@code i}'s {@code -Xlog:gc} file, milliseconds, with the
   * line it came from; NaN when the log has no pause.
   */
  static double maxGcPauseMillis(Path gcLog) {
    double max = Double.NaN;
    try {
      for (String line : Files.readAllLines(gcLog)) {
        Matcher m = PAUSE.matcher(line);
        if (m.find()) {
          double ms = Double.parseDouble(m.group(1));
          if (Double.isNaN(max) || ms > max) {
            max = ms;
          }
        }
      }
    } catch (IOException e) {
      return Double.NaN;
    }
    return max;
  }

  /** Number of GC pauses in the log. */
  static int gcPauses(Path gcLog) {
    try {
      return (int) Files.readAllLines(gcLog).stream().filter(l -> PAUSE.matcher(l).find()).count();
    } catch (IOException e) {
      return 0;
    }
  }

  /** SIGTERM every live member (SIGKILL after 15 s), then deletes the data directories. */
  @Override
  public void close() {
    for (Node n : nodes) {
      if (n.process != null) {
        n.process.destroy();
      }
    }
    for (Node n : nodes) {
      if (n.process == null) {
        continue;
      }
      try {
        if (!n.process.waitFor(15, TimeUnit.SECONDS)) {
          n.process.destroyForcibly().waitFor();
        }
      } catch (InterruptedException e) {
        n.process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
    try (var files = Files.walk(dataRoot)) {
      files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException ignored) {
      // temp files only
    }
  }
}
