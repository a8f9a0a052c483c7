package io.roster.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Registry;
import io.roster.server.registry.ServiceSettings;
import io.roster.server.testing.LoopbackServer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A standalone data directory written by the previous build (store format 1, checked in under
 * {@code golden/data-dir-v1/}): this build starts on it with every fact, rewrites it in its own
 * format, and starts on it again. The previous build wrote it from these calls:
 * two persistent instances of orders-db (10.0.0.9 with {@code role=primary}, 10.0.0.10 with weight
 * 2, then held with {@code enabled=false}), orders-db's protect threshold 0.5 and metadata
 * {@code team=data}, and a persistent instance of gone-db registered and deleted.
 */
class PreviousDataDirTest {

  private static final ServiceKey ORDERS = ServiceKey.of("", "", "orders-db");

  @RegisterExtension
  final LoopbackServer server = LoopbackServer.withDefaults().startedByTest();

  @TempDir Path dir;

  @Test
  void thisBuildReadsThePreviousBuildsDataDirectoryAndRewritesItInItsFormat() throws IOException {
    Path golden = Path.of("src/test/resources/golden/data-dir-v1");
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
    assertThat(ByteBuffer.wrap(Files.readAllBytes(dir.resolve("standalone/journal"))).getInt(8)).isEqualTo(1);

    for (int start = 0; start < 2; start++) {
      server.start(b -> b.dataDir(dir));
      Registry registry = server.server().registry();
      assertThat(registry.settings(ORDERS)).isEqualTo(new ServiceSettings(0.5, Map.of("team", "data")));
      assertThat(registry.serviceImage(ORDERS).registrations()).hasSize(2)
          .allSatisfy(h -> assertThat(h.owner()).isEqualTo(Owner.PERSISTENT));
      Instance primary = registry.instance(ORDERS, new InstanceKey("10.0.0.9", 5432, "DEFAULT"));
      assertThat(primary.metadata()).containsEntry("role", "primary");
      assertThat(primary.enabled()).isTrue();
      InstanceKey heldKey = new InstanceKey("10.0.0.10", 5432, "DEFAULT");
      assertThat(registry.instance(ORDERS, heldKey).weight()).isEqualTo(2.0);
      assertThat(registry.instance(ORDERS, heldKey).enabled()).isFalse();
      assertThat(registry.held(ORDERS, heldKey)).isTrue();
      assertThat(registry.serviceImage(ServiceKey.of("", "", "gone-db"))).isNull();
      server.close();
      assertThat(ByteBuffer.wrap(Files.readAllBytes(dir.resolve("standalone/journal"))).getInt(8))
          .as("rewritten in this build's format").isEqualTo(StateStore.FORMAT);
    }
  }
}
