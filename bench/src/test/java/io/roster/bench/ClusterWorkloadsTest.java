package io.roster.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * W10 and W12 run at (less than) {@code --quick} size against three real server processes and produce a
 * report: a change to the cluster, the SDK or the bench that breaks them fails `make test`
 * instead of a later `make bench`. No timing is asserted (the machine may be loaded).
 */
class ClusterWorkloadsTest {

  private static final Path JAR = Path.of("../server/target/roster-server.jar");

  /** Kept after the run: a member that does not reach SERVING is explained by its log. */
  private static final Path LOGS = Path.of("target/cluster-workloads-test-logs");

  @Test
  void w10AndW12RunAtQuickSizeAndReport() throws Exception {
    Path logs = LOGS;
    assumeTrue(Files.isRegularFile(JAR), JAR.toAbsolutePath() + " is missing: build the server first");
    // Smaller than --quick: the point is that every step runs, not what it measures.
    Args args = Args.parse("--quick", "--server-jar", JAR.toString(), "--cluster-idle-seconds", "1",
        "--w10-warmup-changes", "2", "--w10-changes", "10", "--w10-subscribers", "3",
        "--w12-clients", "6", "--w12-instances", "10", "--w12-services", "20");

    Result w10 = ClusterWorkloads.run(args, JAR, logs, "w10");
    assertThat(w10.rows).extracting(Result.Row::metric)
        .contains("warm-up: 1 round of W12's burst (not measured)", "change on node 1 -> each subscriber on node 3",
            "node 3: largest GC pause of the run")
        .doesNotContain("error");
    // How many of the 30 deliveries are seen depends on the machine's load (a lagging member may
    // push a register and its deregister together, and the subscriber sees neither).
    assertThat(value(w10, "change on node 1 -> each subscriber on node 3")).matches("p50 .* ms \\(n=\\d+\\)");
    assertThat(value(w10, "node 1: idle RSS after start")).endsWith("MiB");

    Result w12 = ClusterWorkloads.run(args, JAR, logs, "w12");
    assertThat(value(w12, "registrations/s, cold (round 1)")).matches("[\\d,]+");
    assertThat(value(w12, "sentinel register -> seen by QueryInstances on every node")).matches("p50 .* ms \\(n=\\d+\\)");
    assertThat(Files.readString(logs.resolve("w12-node1-gc.log"))).contains("Using");
  }

  private static String value(Result r, String metric) {
    return r.rows.stream().filter(row -> row.metric().equals(metric)).findFirst()
        .orElseThrow(() -> new AssertionError(metric + " not in " + r.rows)).value();
  }
}
