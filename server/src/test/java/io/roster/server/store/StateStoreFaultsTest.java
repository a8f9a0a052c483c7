package io.roster.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.ServiceSettings;
import io.roster.server.testing.LogLines;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A journal on a disk that fails (a channel that takes part of a write and then reports a full
 * disk, a failed fsync, a truncate that fails): a failed append is cut back, so the journal is as
 * it was before it; what was acknowledged afterwards is read back after a restart, and what was
 * refused is not. A journal that cannot be cut back takes no write until it can.
 */
class StateStoreFaultsTest {

  private static final ServiceKey DB = ServiceKey.of("", "", "orders-db");

  @TempDir Path dir;

  private final FailingChannel.Disk disk = new FailingChannel.Disk();

  private static StateStore.Stored stored(String ip) {
    return new StateStore.Stored(new Instance(ip, 5432, 1.0, true, true, false, "DEFAULT", Map.of(), ""), "");
  }

  private static InstanceKey key(String ip) {
    return new InstanceKey(ip, 5432, "DEFAULT");
  }

  private static void register(StateStore s, String ip) throws IOException {
    s.persistent(DB, key(ip), stored(ip));
  }

  private long journalSize() throws IOException {
    return Files.size(dir.resolve("journal"));
  }

  /** The persistent instances of a store opened again on the same files, as a restart reads them. */
  private java.util.Set<String> afterRestart() throws IOException {
    try (StateStore s = StateStore.open(dir, 1000)) {
      return s.state().persistent().keySet().stream().map(r -> r.key().ip())
          .collect(java.util.stream.Collectors.toSet());
    }
  }

  @Test
  void aFullDiskInTheMiddleOfARecordLeavesTheJournalAsItWasAndTheWritesAfterItAreReadBack() throws IOException {
    try (StateStore s = StateStore.open(dir, 1000, disk)) {
      register(s, "10.0.0.1");
      long before = journalSize();
      disk.spaceLeft = 11; // the record's length, checksum and 3 bytes of its fact, then "No space left on device"
      assertThatThrownBy(() -> register(s, "10.0.0.2")).isInstanceOf(IOException.class)
          .hasMessageContaining("No space left on device");
      assertThat(journalSize()).as("cut back to the last good record").isEqualTo(before);
      assertThat(s.state().persistent()).hasSize(1);

      disk.spaceLeft = -1; // space freed
      register(s, "10.0.0.3");
      register(s, "10.0.0.4");
    } // a crash now would leave the same files: every write was forced
    assertThat(afterRestart()).containsExactlyInAnyOrder("10.0.0.1", "10.0.0.3", "10.0.0.4");
  }

  @Test
  void aWriteWhoseFsyncFailedIsNotReadBackAndTheJournalGoesOn() throws IOException {
    try (StateStore s = StateStore.open(dir, 1000, disk)) {
      register(s, "10.0.0.1");
      long before = journalSize();
      disk.failForce = true;
      assertThatThrownBy(() -> register(s, "10.0.0.2")).isInstanceOf(IOException.class);
      disk.failForce = false;
      // The record was written and its fsync failed: the disk may hold any part of it. It is
      // refused, so it must not come back: cut back to where the last fsync got to.
      assertThat(journalSize()).isEqualTo(before);
      register(s, "10.0.0.3");
    }
    assertThat(afterRestart()).containsExactlyInAnyOrder("10.0.0.1", "10.0.0.3");
  }

  @Test
  void aJournalThatCannotBeCutBackTakesNoWriteUntilItCanAndSaysSoOnce() throws IOException {
    try (LogLines log = new LogLines(StateStore.class, Level.WARN);
        StateStore s = StateStore.open(dir, 1000, disk)) {
      register(s, "10.0.0.1");
      long before = journalSize();
      disk.spaceLeft = 11;
      disk.failTruncate = true;
      assertThatThrownBy(() -> register(s, "10.0.0.2")).isInstanceOf(IOException.class);
      disk.spaceLeft = -1; // space again, but the torn bytes are still there
      for (int i = 0; i < 3; i++) {
        assertThatThrownBy(() -> register(s, "10.0.0.3")).isInstanceOf(IOException.class)
            .hasMessageContaining("could not be cut back to byte " + before)
            .hasMessageContaining("no durable change is written until it can");
      }
      assertThat(s.state().persistent()).hasSize(1);
      assertThat(log.lines().stream().filter(l -> l.contains("could not be cut back"))).as(log.lines().toString())
          .hasSize(1);

      disk.failTruncate = false; // the disk recovers: the next write cuts back first, and goes on
      register(s, "10.0.0.4");
      assertThat(log.lines()).anySatisfy(l -> assertThat(l).contains("cut back to byte " + before)
          .contains("durable changes are written again"));
    }
    assertThat(afterRestart()).containsExactlyInAnyOrder("10.0.0.1", "10.0.0.4");
  }

  @Test
  void aCompactionThatFailsForSpaceLeavesNoPartFileAndTheJournalTakesWrites() throws IOException {
    try (StateStore s = StateStore.open(dir, 2, disk)) {
      s.settings(DB, new ServiceSettings(0.5, Map.of("team", "data")));
      disk.noSpaceFor = "state.tmp"; // the second fact makes the store compact, which finds no space for it
      register(s, "10.0.0.1"); // on disk in the journal: the write stands
      try (var files = Files.list(dir)) {
        assertThat(files.map(p -> p.getFileName().toString())).containsExactly("journal");
      }
      disk.noSpaceFor = null;
      register(s, "10.0.0.2"); // compacts
    }
    try (var files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("journal", "state");
    }
    assertThat(afterRestart()).containsExactlyInAnyOrder("10.0.0.1", "10.0.0.2");
  }
}
