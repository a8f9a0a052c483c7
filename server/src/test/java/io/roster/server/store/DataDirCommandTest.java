package io.roster.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.ServiceSettings;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code check --data-dir} reports a sound directory and exits 0, a damaged or unpaired one and
 * exits 1 naming what is wrong; {@code repair} does what a refusal names, keeps what it takes out
 * of use, and the store then opens on what it says it kept.
 */
class DataDirCommandTest {

  private static final ServiceKey ORDERS = new ServiceKey("public", "DEFAULT_GROUP", "orders");
  private static final InstanceKey A = new InstanceKey("10.0.0.1", 80, "DEFAULT");
  private static final InstanceKey B = new InstanceKey("10.0.0.2", 80, "DEFAULT");
  private static final Instant NOW = Instant.parse("2026-03-01T10:00:00Z");

  @TempDir Path dataDir;

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private Path standalone() {
    return dataDir.resolve("standalone");
  }

  private int run(String... args) {
    out.reset();
    err.reset();
    return DataDirCommand.run(List.of(args), new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), () -> NOW);
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  /** Settings and a hold compacted into the state file (generation 2), a persistent instance in the journal. */
  private void write() throws IOException {
    try (DataDir d = DataDir.open(dataDir); StateStore s = StateStore.open(d.standalone(), 2)) {
      s.settings(ORDERS, new ServiceSettings(0.5, Map.of()));
      s.hold(ORDERS, A, true);
      s.persistent(ORDERS, B, new StateStore.Stored(
          new Instance("10.0.0.2", 80, 1.0, true, true, false, "DEFAULT", Map.of(), ""), ""));
    }
  }

  @Test
  void aSoundDirectoryIsReportedWithItsFactsAndExitsZero() throws IOException {
    write();
    Files.createDirectories(dataDir.resolve("raft/n1"));
    Files.write(dataDir.resolve("raft/n1/log_0-10"), new byte[100]);
    assertThat(run("check", "--data-dir", dataDir.toString())).as(out() + err()).isEqualTo(0);
    assertThat(out()).contains("state and journal of generation 2")
        .contains("holds: 1 service settings, 1 hold, 1 persistent instance")
        .contains("raft/n1/: a cluster member's Raft log and snapshots, 1 files, 100 bytes")
        .contains("Apache Ratis checks its own log").endsWith("Sound.\n");
  }

  @Test
  void aDamagedLastRecordIsReportedAndCutWhereTheRefusalSaysKeepingWhatIsCut() throws IOException {
    write();
    Path journal = standalone().resolve("journal");
    long last = StoreFiles.readJournal(journal).records().get(0).offset();
    byte[] bytes = Files.readAllBytes(journal);
    bytes[bytes.length - 3] ^= 0x10;
    Files.write(journal, bytes);

    assertThat(run("check", "--data-dir", dataDir.toString())).isEqualTo(1);
    assertThat(out()).contains("1 problem:").contains("record 1 at byte " + last).contains("fails its checksum");

    assertThat(run("repair", "--data-dir", dataDir.toString(), "--truncate-journal-at", String.valueOf(last + 1)))
        .isEqualTo(1);
    assertThat(err()).contains("no record of " + journal + " starts there").contains("nothing was changed");
    assertThat(Files.readAllBytes(journal)).isEqualTo(bytes);

    assertThat(run("repair", "--data-dir", dataDir.toString(), "--truncate-journal-at", String.valueOf(last)))
        .as(err()).isEqualTo(0);
    assertThat(out()).contains("dropped the " + (bytes.length - last) + " bytes");
    assertThat(Files.readAllBytes(standalone().resolve("journal.cut-at-" + last)))
        .isEqualTo(java.util.Arrays.copyOfRange(bytes, (int) last, bytes.length));
    try (StateStore s = StateStore.open(standalone(), 1000)) {
      assertThat(s.state().holds()).containsExactly(new StateStore.InstanceRef(ORDERS, A));
      assertThat(s.state().persistent()).isEmpty();
    }
    assertThat(run("check", "--data-dir", dataDir.toString())).isEqualTo(0);
  }

  @Test
  void aMissingJournalIsReportedAndANewOneStartsAfterTheStateFile() throws IOException {
    write();
    Files.delete(standalone().resolve("journal"));
    assertThat(run("check", "--data-dir", dataDir.toString())).isEqualTo(1);
    assertThat(out()).contains("journal is missing");
    assertThatThrownBy(() -> StateStore.open(standalone(), 1000)).isInstanceOf(DataDir.Refused.class);

    assertThat(run("repair", "--data-dir", dataDir.toString(), "--new-journal")).as(err()).isEqualTo(0);
    assertThat(out()).contains("Wrote an empty journal of generation 2");
    try (StateStore s = StateStore.open(standalone(), 1000)) {
      assertThat(s.state().holds()).containsExactly(new StateStore.InstanceRef(ORDERS, A));
      assertThat(s.state().persistent()).isEmpty();
    }
  }

  @Test
  void aMissingStateFileIsReportedAndTheJournalAloneIsStartedFromWhenAsked() throws IOException {
    write();
    Files.move(standalone().resolve("state"), dataDir.resolve("moved-state"));
    assertThat(run("check", "--data-dir", dataDir.toString())).isEqualTo(1);
    assertThat(out()).contains("state is missing");

    assertThat(run("repair", "--data-dir", dataDir.toString(), "--new-state")).as(err()).isEqualTo(0);
    assertThat(out()).contains("from the journal's 1 records alone");
    try (StateStore s = StateStore.open(standalone(), 1000)) {
      assertThat(s.state().holds()).isEmpty();
      assertThat(s.state().persistent()).containsOnlyKeys(new StateStore.InstanceRef(ORDERS, B));
    }
  }

  @Test
  void aReplacedFileIsKeptBesideTheNewOne() throws IOException {
    write();
    byte[] journal = Files.readAllBytes(standalone().resolve("journal"));
    assertThat(run("repair", "--data-dir", dataDir.toString(), "--new-journal")).isEqualTo(0);
    assertThat(Files.readAllBytes(standalone().resolve("journal.replaced-20260301-100000"))).isEqualTo(journal);
    assertThat(out()).contains("no longer read");
  }

  @Test
  void badArgumentsExitTwoWithTheUsage() {
    assertThat(run("check")).isEqualTo(2);
    assertThat(err()).contains("usage: check  --data-dir DIR");
    assertThat(run("repair", "--data-dir", dataDir.toString(), "--truncate-journal-at", "x")).isEqualTo(2);
    assertThat(err()).contains("\"x\" is not a byte offset");
  }
}
