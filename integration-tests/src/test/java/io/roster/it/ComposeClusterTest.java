package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.roster.client.Instance;
import io.roster.client.RosterClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.ComposeContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.containers.wait.strategy.WaitStrategy;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * docker/docker-compose.yml as {@code make cluster-up} starts it: the image built from this
 * tree, the one-shot {@code pki} service writing the peer TLS files into their volume, three
 * nodes in one cluster over mutual TLS (a node reports SERVING only once it has caught up with
 * the others' log), each with the sample auth file docker/auth.json. A client of the sample admin
 * user (an access token from a login at node 1's HTTP port) registers through node 1; the
 * registration reaches a subscriber of node 3 (by push: its poll is off) and a query on node 2.
 *
 * <p>Needs a Docker engine and Compose v2 ({@code docker compose}) on the PATH; without an
 * engine the class is skipped, and so it is when {@code docker compose version} fails. The
 * compose file's published ports are set to container ports alone, so Docker picks free host
 * ports and a running {@code make run} or {@code make cluster} is no obstacle; the test reaches
 * the nodes through Testcontainers' own mapped ports ({@link ComposeContainer#getServiceHost},
 * {@link ComposeContainer#getServicePort}).
 */
@Testcontainers(disabledWithoutDocker = true)
class ComposeClusterTest {

  private static final int CLIENT_PORT = 9848;
  private static final int HTTP_PORT = 8848;
  private static final Path COMPOSE_FILE =
      Path.of(System.getProperty("roster.compose.file", "../docker/docker-compose.yml"));

  /** Compose v2 names the first container of service S "S-1". */
  private static final String NODE1 = "roster1-1";
  private static final String NODE2 = "roster2-1";
  private static final String NODE3 = "roster3-1";

  private static ComposeContainer cluster;

  @BeforeAll
  static void startCluster() {
    Assumptions.assumeTrue(composeV2(), "`docker compose version` failed: Compose v2 is needed");
    cluster = new ComposeContainer(COMPOSE_FILE.toFile())
        // The local `docker compose`: the build context is the repository root, outside docker/,
        // which a containerised compose (it mounts only the compose file's folder) cannot see.
        .withLocalCompose(true)
        .withBuild(true)
        .withPull(false) // roster-server:local is built, not pulled; the build pulls its base images
        // The nodes (and pki, which they depend on), not the file's Prometheus and Grafana.
        .withServices("roster1", "roster2", "roster3")
        // A container port alone: published on a free host port (see the compose file).
        .withEnv(Map.of("ROSTER1_CLIENT", "9848", "ROSTER1_HTTP", "8848", "ROSTER2_CLIENT", "9848",
            "ROSTER2_HTTP", "8848", "ROSTER3_CLIENT", "9848", "ROSTER3_HTTP", "8848"))
        .withExposedService(NODE1, CLIENT_PORT, healthy())
        .withExposedService(NODE1, HTTP_PORT)
        .withExposedService(NODE2, CLIENT_PORT, healthy())
        .withExposedService(NODE3, CLIENT_PORT, healthy());
    cluster.start();
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.stop();
    }
  }

  /** Whether {@code docker compose version} answers (Compose v2 as a docker CLI plugin). */
  private static boolean composeV2() {
    try {
      Process p = new ProcessBuilder("docker", "compose", "version").redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return false;
      }
      return p.exitValue() == 0;
    } catch (java.io.IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The container's own HEALTHCHECK (HealthProbe: gRPC health is SERVING); the first start also builds. */
  private static WaitStrategy healthy() {
    return Wait.forHealthcheck().withStartupTimeout(Timing.scaled(Duration.ofMinutes(3)));
  }

  private static String address(String node) {
    return cluster.getServiceHost(node, CLIENT_PORT) + ":" + cluster.getServicePort(node, CLIENT_PORT);
  }

  @Test
  void registeredThroughNode1IsPushedByNode3AndQueriedOnNode2() throws Exception {
    String service = "compose-demo";
    // An access token is valid on every member: they read the same auth file.
    String token = ShippedDockerFiles.adminAccessToken(cluster.getServiceHost(NODE1, HTTP_PORT),
        cluster.getServicePort(NODE1, HTTP_PORT));
    try (RosterClient provider = RosterClient.builder().serverAddresses(address(NODE1)).token(token)
            .clientName("it-compose-provider").build();
        Subscriber onNode3 = new Subscriber(RosterClient.builder().serverAddresses(address(NODE3)).token(token)
            .clientName("it-compose-subscriber").pollEnabled(false).build(), service);
        RosterClient onNode2 = RosterClient.builder().serverAddresses(address(NODE2)).token(token)
            .clientName("it-compose-query").build()) {
      provider.registerInstance(service, Instance.of("10.8.0.1", 8080));

      onNode3.await(Timing.seconds(30), Subscriber.hasPort(8080));
      assertThat(onNode3.latest()).extracting(Instance::ip, Instance::port).containsExactly(tuple("10.8.0.1", 8080));
      await("the instance in a query on node 2").atMost(Timing.seconds(30)).pollInterval(Duration.ofMillis(100))
          .untilAsserted(() -> assertThat(onNode2.getAllInstances(service))
              .extracting(Instance::ip, Instance::port).containsExactly(tuple("10.8.0.1", 8080)));
    }
  }
}
