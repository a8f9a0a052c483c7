package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.client.Instance;
import io.roster.client.RosterClient;
import io.roster.server.testing.process.LocalCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * grpc-java's xDS client fails over between the members of a cluster when its bootstrap's {@code
 * server_uri} is one name with every member's address (docs/xds.md, decision 101): the client gets
 * its first assignment from the first member, that member is killed with -9, and a change made
 * afterwards through another member reaches the client. The name is the client JVM's own hosts
 * file ({@code -Djdk.net.hosts.file}), as a DNS name with an A record per member would be.
 */
class XdsFailoverTest {

  @RegisterExtension
  final LocalClusterExtension clusters = new LocalClusterExtension();

  @Test
  void aClientOnANameOfEveryMemberFollowsChangesAfterItsMemberIsKilled(@TempDir Path dir) throws Exception {
    LocalCluster cluster = clusters.startOnOneClientPort();
    HealthBackend first = clusters.closing(HealthBackend.start());
    HealthBackend second = clusters.closing(HealthBackend.start());
    RosterClient provider = clusters.closing(RosterClient.builder().serverAddresses(cluster.address(2))
        .clientName("xds-provider").drainTimeout(Duration.ZERO).requestTimeout(Timing.seconds(15)).build());
    provider.registerInstance("xds-failover", Instance.of("127.0.0.1", first.port()));

    Path hosts = Files.writeString(dir.resolve("hosts"), String.join("", cluster.hosts.stream()
        .map(h -> h + " roster.test\n").toList()));
    Path bootstrap = Files.writeString(dir.resolve("bootstrap.json"), "{\"xds_servers\": [{\"server_uri\": \"roster.test:"
        + cluster.ports.get(0) + "\", \"channel_creds\": [{\"type\": \"insecure\"}], \"server_features\": [\"xds_v3\"]}],"
        + " \"node\": {\"id\": \"xds-failover-test\", \"locality\": {\"zone\": \"test\"}}}");
    XdsClientProcess client = clusters.closing(new XdsClientProcess(bootstrap, "xds:///xds-failover", 5, true,
        "-Djdk.net.hosts.file=" + hosts));
    await().atMost(Timing.seconds(60)).until(() -> client.output().contains("OK 5"));
    assertThat(first.calls().get()).as("calls to the first backend").isGreaterThanOrEqualTo(5);

    // The name lists member 0 first: pick_first connected the client's ADS stream there.
    cluster.node(0).kill9();
    provider.registerInstance("xds-failover", Instance.of("127.0.0.1", second.port()));
    provider.deregisterInstance("xds-failover", Instance.of("127.0.0.1", first.port()));
    await().atMost(Timing.seconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> {
      client.call(5);
      return second.calls().get() > 0;
    });
    assertThat(client.isAlive()).as(client.output()).isTrue();
  }
}
