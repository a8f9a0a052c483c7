package io.roster.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.server.model.InstanceKey;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.HealthCheck;
import io.roster.server.registry.ServiceSettings;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A standalone server's state file and journal: what is written reads back, across compaction;
 * a write cut short at the end is dropped; anything else unreadable refuses, naming the file.
 */
class StateStoreTest {

  private static final ServiceKey ORDERS = new ServiceKey("public", "DEFAULT_GROUP", "orders");
  private static final ServiceKey USERS = new ServiceKey("dev", "g", "users");
  private static final InstanceKey A = new InstanceKey("10.0.0.1", 80, "DEFAULT");
  private static final InstanceKey B = new InstanceKey("10.0.0.2", 80, "DEFAULT");

  @TempDir Path dir;

  @Test
  void whatIsWrittenReadsBackAfterReopening() throws IOException {
    try (StateStore s = StateStore.open(dir, 1000)) {
      s.settings(ORDERS, new ServiceSettings(0.5, Map.of("team", "pay")));
      s.settings(USERS, new ServiceSettings(0.2, Map.of()));
      s.settings(USERS, ServiceSettings.DEFAULT); // back to the defaults: nothing kept
      s.hold(ORDERS, A, true);
      s.hold(ORDERS, B, true);
      s.hold(ORDERS, B, false);
    }
    try (StateStore s = StateStore.open(dir, 1000)) {
      assertThat(s.state().settings()).containsExactly(Map.entry(ORDERS, new ServiceSettings(0.5, Map.of("team", "pay"))));
      assertThat(s.state().holds()).containsExactly(new StateStore.InstanceRef(ORDERS, A));
    }
  }

  @Test
  void compactionKeepsTheStateAndEmptiesTheJournal() throws IOException {
    try (StateStore s = StateStore.open(dir, 3)) {
      s.settings(ORDERS, new ServiceSettings(0.1, Map.of()));
      s.hold(ORDERS, A, true);
      s.settings(ORDERS, new ServiceSettings(0.3, Map.of())); // the third fact: compacted
      assertThat(Files.size(dir.resolve("journal"))).isEqualTo(StoreFiles.JOURNAL_HEADER);
      s.hold(USERS, B, true); // after the compaction, in the new journal
    }
    try (StateStore s = StateStore.open(dir, 3)) {
      assertThat(s.state().settings()).containsExactly(Map.entry(ORDERS, new ServiceSettings(0.3, Map.of())));
      assertThat(s.state().holds()).containsExactlyInAnyOrder(new StateStore.InstanceRef(ORDERS, A),
          new StateStore.InstanceRef(USERS, B));
    }
  }

  @Test
  void aWriteCutShortAtTheEndIsDroppedAndTheJournalGoesOn() throws IOException {
    try (StateStore s = StateStore.open(dir, 1000)) {
      s.hold(ORDERS, A, true);
      s.hold(ORDERS, B, true);
    }
    Path journal = dir.resolve("journal");
    long full = Files.size(journal);
    try (var c = java.nio.channels.FileChannel.open(journal, StandardOpenOption.WRITE)) {
      c.truncate(full - 3); // the crash came in the middle of the second record
    }
    try (StateStore s = StateStore.open(dir, 1000)) {
      assertThat(s.state().holds()).containsExactly(new StateStore.InstanceRef(ORDERS, A));
      s.hold(USERS, B, true);
    }
    try (StateStore s = StateStore.open(dir, 1000)) {
      assertThat(s.state().holds()).containsExactlyInAnyOrder(new StateStore.InstanceRef(ORDERS, A),
          new StateStore.InstanceRef(USERS, B));
    }
  }

  @Test
  void aDamagedRecordBeforeTheEndRefusesNamingTheFile() throws IOException {
    try (StateStore s = StateStore.open(dir, 1000)) {
      s.hold(ORDERS, A, true);
      s.hold(ORDERS, B, true);
    }
    Path journal = dir.resolve("journal");
    byte[] bytes = Files.readAllBytes(journal);
    int first = StoreFiles.JOURNAL_HEADER;
    bytes[first + 8 + 2] ^= 0x40; // a bit of the first record's payload
    Files.write(journal, bytes);
    assertThatThrownBy(() -> StateStore.open(dir, 1000)).isInstanceOf(DataDir.Refused.class)
        .hasMessageContaining(journal.toString()).hasMessageContaining("record 1 at byte " + first + " of ")
        .hasMessageContaining("fails its checksum").hasMessageContaining("restore a backup");
    assertThat(Files.readAllBytes(journal)).as("nothing rewritten").isEqualTo(bytes);
  }

  @Test
  void aDamagedStateFileRefuses() throws IOException {
    try (StateStore s = StateStore.open(dir, 1)) {
      s.settings(ORDERS, new ServiceSettings(0.1, Map.of())); // compacted at once: a state file
    }
    Path state = dir.resolve("state");
    byte[] bytes = Files.readAllBytes(state);
    bytes[bytes.length - 1] ^= 0x01;
    Files.write(state, bytes);
    assertThatThrownBy(() -> StateStore.open(dir, 1)).isInstanceOf(DataDir.Refused.class)
        .hasMessageContaining(state + " is damaged: its checksum does not match its content");
    Files.writeString(state, "{\"not\": \"roster\"}");
    assertThatThrownBy(() -> StateStore.open(dir, 1)).isInstanceOf(DataDir.Refused.class)
        .hasMessageContaining("it is not a Roster state file");
  }

  @Test
  void aNewerFormatRefusesAndChangesNothing() throws IOException {
    try (StateStore s = StateStore.open(dir, 1000)) {
      s.hold(ORDERS, A, true);
    }
    Path journal = dir.resolve("journal");
    byte[] bytes = Files.readAllBytes(journal);
    ByteBuffer.wrap(bytes).putInt(8, StateStore.FORMAT + 1);
    Files.write(journal, bytes);
    assertThatThrownBy(() -> StateStore.open(dir, 1000)).isInstanceOf(DataDir.Refused.class)
        .hasMessageContaining("is in format " + (StateStore.FORMAT + 1))
        .hasMessageContaining("start a Roster at least as new as the one that wrote it");
    assertThat(Files.readAllBytes(journal)).isEqualTo(bytes);
  }

  @Test
  void healthChecksReadBackAndAnOlderFormatIsRewrittenInThisOneKeepingItsFacts() throws IOException {
    ServiceSettings checked = new ServiceSettings(0.5, Map.of(), Map.of("DEFAULT",
        HealthCheck.http(8081, "/health", 204, Map.of("X-Probe", "yes")), "manual", HealthCheck.NONE));
    try (StateStore s = StateStore.open(dir, 1000)) {
      s.settings(ORDERS, checked);
      s.hold(ORDERS, A, true);
    }
    // As an older Roster wrote it: the same records under a format-1 header, the magic word and the
    // format alone (format 1 had no checks, but its records read the same).
    Path journal = dir.resolve("journal");
    byte[] now = Files.readAllBytes(journal);
    byte[] bytes = new byte[now.length - StoreFiles.JOURNAL_HEADER + StoreFiles.OLD_JOURNAL_HEADER];
    System.arraycopy(now, 0, bytes, 0, StoreFiles.OLD_JOURNAL_HEADER);
    System.arraycopy(now, StoreFiles.JOURNAL_HEADER, bytes, StoreFiles.OLD_JOURNAL_HEADER,
        now.length - StoreFiles.JOURNAL_HEADER);
    ByteBuffer.wrap(bytes).putInt(8, 1);
    Files.write(journal, bytes);
    try (StateStore s = StateStore.open(dir, 1000)) {
      assertThat(s.state().settings()).containsExactly(Map.entry(ORDERS, checked));
      assertThat(s.state().holds()).containsExactly(new StateStore.InstanceRef(ORDERS, A));
    }
    assertThat(ByteBuffer.wrap(Files.readAllBytes(journal)).getInt(8)).as("the journal's format").isEqualTo(
        StateStore.FORMAT);
    assertThat(ByteBuffer.wrap(Files.readAllBytes(dir.resolve("state"))).getInt(8)).as("the state file's format")
        .isEqualTo(StateStore.FORMAT);
    try (StateStore s = StateStore.open(dir, 1000)) {
      assertThat(s.state().settings()).containsExactly(Map.entry(ORDERS, checked));
      assertThat(s.state().holds()).containsExactly(new StateStore.InstanceRef(ORDERS, A));
    }
  }
}
