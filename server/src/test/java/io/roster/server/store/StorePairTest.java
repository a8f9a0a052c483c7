package io.roster.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.ServiceSettings;
import io.roster.server.testing.LogLines;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state file and the journal as a pair (decision 85), and the journal's end (decision 84):
 * a missing, empty or mismatched part refuses the start naming what to do, and changes nothing;
 * a compaction that stopped half-way is finished; a torn tail is dropped with a WARN, and a whole
 * record that fails its checksum, the last one too, refuses.
 */
class StorePairTest {

  private static final ServiceKey ORDERS = new ServiceKey("public", "DEFAULT_GROUP", "orders");
  private static final InstanceKey A = new InstanceKey("10.0.0.1", 80, "DEFAULT");
  private static final InstanceKey B = new InstanceKey("10.0.0.2", 80, "DEFAULT");
  private static final InstanceKey C = new InstanceKey("10.0.0.3", 80, "DEFAULT");

  @TempDir Path dataDir;

  private Path dir() {
    return dataDir.resolve("standalone");
  }

  /** A state file (compacted after two facts) and a journal with one fact after it. */
  private void writePair() throws IOException {
    try (StateStore s = StateStore.open(dir(), 2)) {
      s.settings(ORDERS, new ServiceSettings(0.5, Map.of()));
      s.hold(ORDERS, A, true); // compacted: state of generation 2
      s.hold(ORDERS, B, true); // in the journal of generation 2
    }
  }

  private Map<String, byte[]> files() throws IOException {
    Map<String, byte[]> files = new java.util.TreeMap<>();
    try (Stream<Path> list = Files.list(dir())) {
      for (Path p : list.toList()) {
        files.put(p.getFileName().toString(), Files.readAllBytes(p));
      }
    }
    return files;
  }

  private void assertRefusedChangingNothing(String... phrases) throws IOException {
    Map<String, byte[]> before = files();
    var refusal = assertThatThrownBy(() -> StateStore.open(dir(), 2)).isInstanceOf(DataDir.Refused.class);
    for (String p : phrases) {
      refusal.hasMessageContaining(p);
    }
    Map<String, byte[]> after = files();
    assertThat(after.keySet()).isEqualTo(before.keySet());
    after.forEach((name, bytes) -> assertThat(bytes).as(name).isEqualTo(before.get(name)));
  }

  @Test
  void aNewDirectoryStartsEmpty() throws IOException {
    try (StateStore s = StateStore.open(dir(), 2)) {
      assertThat(s.state().holds()).isEmpty();
    }
  }

  @Test
  void aMissingJournalBesideAStateFileRefuses() throws IOException {
    writePair();
    Files.delete(dir().resolve("journal"));
    assertRefusedChangingNothing(dir().resolve("journal") + " is missing", "generation 2",
        "--restore FILE", "repair --data-dir " + dataDir.toAbsolutePath() + " --new-journal");
  }

  @Test
  void anEmptyJournalRefuses() throws IOException {
    writePair();
    Files.write(dir().resolve("journal"), new byte[0]);
    assertRefusedChangingNothing(dir().resolve("journal") + " is empty (0 bytes)", "--new-journal");
  }

  @Test
  void aMissingStateFileBeforeAJournalThatContinuesItRefuses() throws IOException {
    writePair();
    Files.delete(dir().resolve("state"));
    assertRefusedChangingNothing(dir().resolve("state") + " is missing", "journal",
        "of generation 2", "--new-state");
  }

  @Test
  void aStateFileAndAJournalOfDifferentGenerationsRefuse() throws IOException {
    writePair();
    Path old = dataDir.resolve("old-state");
    Files.copy(dir().resolve("state"), old);
    try (StateStore s = StateStore.open(dir(), 2)) {
      s.hold(ORDERS, C, true); // compacted again: generation 3
    }
    Files.copy(old, dir().resolve("state"), StandardCopyOption.REPLACE_EXISTING);
    assertRefusedChangingNothing(dir().resolve("state") + " is of generation 2", "of generation 3",
        "they are not a pair", "--new-journal", "--new-state");
  }

  @Test
  void anOlderCopyOfTheJournalAStateWasCompactedFromRefuses() throws IOException {
    writePair();
    Path old = dataDir.resolve("old-journal");
    Files.copy(dir().resolve("journal"), old);
    try (StateStore s = StateStore.open(dir(), 2)) {
      s.hold(ORDERS, C, true); // compacted again: generation 3, from the journal of generation 2 with 2 records
    }
    Files.copy(old, dir().resolve("journal"), StandardCopyOption.REPLACE_EXISTING);
    assertRefusedChangingNothing("(generation 3) was compacted from", "it is an older copy", "--new-journal");
  }

  @Test
  void aCompactionThatStoppedBeforeItsNewJournalIsFinishedAtTheNextStartWithEveryFact() throws IOException {
    FailingChannel.Disk disk = new FailingChannel.Disk();
    try (StateStore s = StateStore.open(dir(), 2)) {
      s.settings(ORDERS, new ServiceSettings(0.5, Map.of()));
    }
    try (LogLines log = new LogLines(StateStore.class, Level.WARN);
        StateStore s = StateStore.open(dir(), 2, disk)) {
      disk.noSpaceFor = "journal.tmp"; // the state file of generation 2 is written; its journal is not
      s.hold(ORDERS, A, true);
      assertThat(log.lines()).anySatisfy(l -> assertThat(l).contains("Could not compact"));
      disk.noSpaceFor = null;
      s.hold(ORDERS, B, true); // still the journal of generation 1, after the bytes the state holds
    }
    try (StateStore s = StateStore.open(dir(), 1000)) {
      assertThat(s.state().settings()).containsKey(ORDERS);
      assertThat(s.state().holds()).containsExactlyInAnyOrder(new StateStore.InstanceRef(ORDERS, A),
          new StateStore.InstanceRef(ORDERS, B));
    }
    assertThat(StoreFiles.readJournal(dir().resolve("journal")).generation()).as("a new pair was written")
        .isEqualTo(StoreFiles.readState(dir().resolve("state")).generation());
  }

  @Test
  void aFlippedByteInTheLastWholeRecordRefusesNamingItsByteAndTheCutThatWouldDropIt() throws IOException {
    try (StateStore s = StateStore.open(dir(), 1000)) {
      s.hold(ORDERS, A, true);
      s.hold(ORDERS, B, true);
    }
    Path journal = dir().resolve("journal");
    StoreFiles.JournalFile read = StoreFiles.readJournal(journal);
    long last = read.records().get(1).offset();
    byte[] bytes = Files.readAllBytes(journal);
    bytes[bytes.length - 2] ^= 0x01;
    Files.write(journal, bytes);
    assertRefusedChangingNothing(journal + " is damaged: record 2 at byte " + last, "fails its checksum",
        "it is the last one", "check --data-dir " + dataDir.toAbsolutePath(),
        "repair --data-dir " + dataDir.toAbsolutePath() + " --truncate-journal-at " + last);
  }

  @Test
  void zerosAfterTheLastRecordAreATornTailDroppedWithAWarning() throws IOException {
    try (StateStore s = StateStore.open(dir(), 1000)) {
      s.hold(ORDERS, A, true);
    }
    Path journal = dir().resolve("journal");
    long size = Files.size(journal);
    Files.write(journal, new byte[700], java.nio.file.StandardOpenOption.APPEND); // the length reached the disk
    try (LogLines log = new LogLines(StateStore.class, Level.WARN);
        StateStore s = StateStore.open(dir(), 1000)) {
      assertThat(s.state().holds()).containsExactly(new StateStore.InstanceRef(ORDERS, A));
      assertThat(log.lines()).anySatisfy(l -> assertThat(l).contains("dropped the last 700 bytes, from byte " + size)
          .contains("never acknowledged"));
    }
    assertThat(Files.size(journal)).isEqualTo(size);
  }
}
