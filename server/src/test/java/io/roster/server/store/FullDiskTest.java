package io.roster.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.ServiceKey;
import io.roster.server.testing.Tmpfs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The store on a real full disk: a 2 MiB tmpfs (root only; skipped with the reason elsewhere).
 * Persistent registrations until the disk refuses them, space freed, two more, and then the files
 * read as a restart after {@code kill -9} reads them (every write was forced before it returned;
 * the process keeps no bytes of its own): every acknowledged registration is there, and none that
 * was refused.
 */
class FullDiskTest {

  private static final ServiceKey DB = ServiceKey.of("", "", "orders-db");
  /** Makes each record about 3 KiB, so that the disk fills in a few hundred and a record straddles its end. */
  private static final Map<String, String> PADDING = Map.of("a", "x".repeat(1000), "b", "y".repeat(1000),
      "c", "z".repeat(1000));

  @TempDir Path dir;

  private static void register(StateStore s, String ip) throws IOException {
    s.persistent(DB, new InstanceKey(ip, 5432, "DEFAULT"), new StateStore.Stored(
        new Instance(ip, 5432, 1.0, true, true, false, "DEFAULT", PADDING, ""), ""));
  }

  private static String ip(int i) {
    return "10.0." + (i / 250) + "." + (i % 250 + 1);
  }

  @Test
  void afterTheDiskFilledAndSpaceCameBackARestartHasEveryAcknowledgedWrite() throws Exception {
    Path mount = dir.resolve("disk");
    try (Tmpfs disk = Tmpfs.mount(mount, "size=2m")) {
      Path filler = mount.resolve("filler");
      Files.write(filler, new byte[256 * 1024]); // what an operator deletes to make room
      Path store = mount.resolve("standalone");
      Set<String> acknowledged = new LinkedHashSet<>();
      int refused = 0;
      StateStore s = StateStore.open(store, 1_000_000);
      int i = 0;
      while (refused < 3 && i < 5_000) {
        String ip = ip(i++);
        try {
          register(s, ip);
          acknowledged.add(ip);
        } catch (IOException e) {
          assertThat(e).hasMessageContaining("No space left on device");
          refused++;
        }
      }
      assertThat(refused).as("the disk filled").isEqualTo(3);
      assertThat(acknowledged).hasSizeGreaterThan(100);

      Files.delete(filler); // space freed
      for (int k = 0; k < 2; k++) {
        String ip = ip(i++);
        register(s, ip);
        acknowledged.add(ip);
      }
      // kill -9: the store is left open, as a killed process leaves it; a new one reads the files.
      try (StateStore restarted = StateStore.open(store, 1_000_000)) {
        assertThat(restarted.state().persistent().keySet().stream().map(r -> r.key().ip())
            .collect(Collectors.toSet())).isEqualTo(acknowledged);
      } finally {
        s.close();
      }
    }
  }
}
