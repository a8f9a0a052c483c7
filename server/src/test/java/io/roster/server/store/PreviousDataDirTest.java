package io.roster.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.HealthCheck;
import io.roster.server.registry.Registry;
import io.roster.server.registry.ServiceSettings;
import io.roster.server.testing.LoopbackServer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Standalone data directories written by earlier builds (store format 1 under {@code
 * golden/data-dir-v1/}, a journal alone; format 2 under {@code golden/data-dir-v2/}, a state file
 * and a journal with no generation): this build starts on each with every fact, rewrites it in its
 * own format, and starts on it again. The earlier builds wrote them from these calls:
 * two persistent instances of orders-db (10.0.0.9 with {@code role=primary}, 10.0.0.10 with weight
 * 2, then held with {@code enabled=false}), orders-db's protect threshold 0.5 and metadata
 * {@code team=data}, and a persistent instance of gone-db registered and deleted. Format 2 adds an
 * HTTP check of orders-db's DEFAULT cluster (port 8081, path /health, status 204, header {@code
 * X-Probe: roster}), the identity {@code dba} that registered the first two, and a third instance
 * 10.0.0.11 with {@code role=replica}, registered unhealthy.
 */
class PreviousDataDirTest {

  private static final ServiceKey ORDERS = ServiceKey.of("", "", "orders-db");

  @RegisterExtension
  final LoopbackServer server = LoopbackServer.withDefaults().startedByTest();

  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(ints = {1, 2})
  void thisBuildReadsAnEarlierBuildsDataDirectoryAndRewritesItInItsFormat(int format) throws IOException {
    Path golden = Path.of("src/test/resources/golden/data-dir-v" + format);
    try (Stream<Path> files = Files.walk(golden)) {
      for (Path f : files.toList()) {
        Path to = dir.resolve(golden.relativize(f).toString());
        if (Files.isDirectory(f)) {
          Files.createDirectories(to);
        } else {
          Files.copy(f, to);
        }
      }
    }
    assertThat(ByteBuffer.wrap(Files.readAllBytes(dir.resolve("standalone/journal"))).getInt(8)).isEqualTo(format);

    for (int start = 0; start < 2; start++) {
      server.start(b -> b.dataDir(dir));
      Registry registry = server.server().registry();
      assertThat(registry.settings(ORDERS)).isEqualTo(new ServiceSettings(0.5, Map.of("team", "data"),
          format < 2 ? Map.of() : Map.of("DEFAULT", HealthCheck.http(8081, "/health", 204, Map.of("X-Probe", "roster")))));
      assertThat(registry.serviceImage(ORDERS).registrations()).hasSize(format < 2 ? 2 : 3)
          .allSatisfy(h -> assertThat(h.owner()).isEqualTo(Owner.PERSISTENT));
      Instance primary = registry.instance(ORDERS, new InstanceKey("10.0.0.9", 5432, "DEFAULT"));
      assertThat(primary.metadata()).containsEntry("role", "primary");
      assertThat(primary.enabled()).isTrue();
      InstanceKey heldKey = new InstanceKey("10.0.0.10", 5432, "DEFAULT");
      assertThat(registry.instance(ORDERS, heldKey).weight()).isEqualTo(2.0);
      assertThat(registry.instance(ORDERS, heldKey).enabled()).isFalse();
      assertThat(registry.held(ORDERS, heldKey)).isTrue();
      assertThat(registry.serviceImage(ServiceKey.of("", "", "gone-db"))).isNull();
      if (format >= 2) {
        assertThat(registry.claimOf(ORDERS, primary.key()).identity()).isEqualTo("dba");
        Instance replica = registry.instance(ORDERS, new InstanceKey("10.0.0.11", 5432, "DEFAULT"));
        assertThat(replica.metadata()).containsEntry("role", "replica");
        assertThat(replica.healthy()).isFalse();
      }
      server.close();
      assertThat(ByteBuffer.wrap(Files.readAllBytes(dir.resolve("standalone/journal"))).getInt(8))
          .as("rewritten in this build's format").isEqualTo(StateStore.FORMAT);
    }
  }
}
