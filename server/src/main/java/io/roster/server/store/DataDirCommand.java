package io.roster.server.store;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * {@code java -jar roster-server.jar check|repair --data-dir DIR ...} (docs/persistence.md,
 * "Checking a data directory" and "When a file is missing or damaged"):
 *
 * <pre>
 * check  --data-dir DIR                          verify it offline: the layout, every checksum, the state
 *                                                file and journal as a pair, the facts they hold; exit 0
 *                                                when sound, 1 with a report of what is wrong
 * repair --data-dir DIR --truncate-journal-at B  cut the journal at byte B (a record's start), keeping the
 *                                                bytes cut in standalone/journal.cut-at-B
 * repair --data-dir DIR --new-journal            start an empty journal after the state file (the old one,
 *                                                if any, kept as standalone/journal.replaced-TIME)
 * repair --data-dir DIR --new-state              start from the journal's changes alone (the old state
 *                                                file, if any, kept as standalone/state.replaced-TIME)
 * </pre>
 *
 * {@code check} only reads, without the lock: it may run beside a server, which a line of its
 * report says (a write under way then shows as a torn tail). {@code repair} takes the lock, so it
 * refuses while a server runs, says what it drops, and keeps every byte it takes out of use.
 * Cluster members' {@code raft/} directories are listed, not checked: Apache Ratis checks its own
 * log and snapshots when the member starts. Single-threaded.
 */
public final class DataDirCommand {

  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC);
  private static final String USAGE = String.join(System.lineSeparator(), "usage: check  --data-dir DIR",
      "       repair --data-dir DIR --truncate-journal-at BYTE | --new-journal | --new-state");

  private final PrintStream out;
  /** The wall clock: names the files a repair replaces. */
  private final Supplier<Instant> clock;

  private DataDirCommand(PrintStream out, Supplier<Instant> clock) {
    this.out = out;
    this.clock = clock;
  }

  /** Runs {@code args} ({@code check ...} or {@code repair ...}); returns the process exit status. */
  public static int main(List<String> args, PrintStream out, PrintStream err) {
    return run(args, out, err, () -> java.time.Instant.ofEpochMilli(
        io.roster.server.time.SystemScheduler.wallClockMicros() / 1000));
  }

  static int run(List<String> args, PrintStream out, PrintStream err, Supplier<Instant> clock) {
    if (args.size() < 3 || !args.get(1).equals("--data-dir") || args.get(2).isEmpty()) {
      err.println(USAGE);
      return 2;
    }
    Path dir = Path.of(args.get(2)).toAbsolutePath().normalize();
    List<String> rest = args.subList(3, args.size());
    DataDirCommand command = new DataDirCommand(out, clock);
    try {
      if (args.get(0).equals("check") && rest.isEmpty()) {
        return command.check(dir);
      }
      if (args.get(0).equals("repair") && rest.size() == 2 && rest.get(0).equals("--truncate-journal-at")) {
        long at;
        try {
          at = Long.parseLong(rest.get(1));
        } catch (NumberFormatException e) {
          err.println("--truncate-journal-at: \"" + rest.get(1) + "\" is not a byte offset (a whole number)");
          return 2;
        }
        command.truncate(dir, at);
        return 0;
      }
      if (args.get(0).equals("repair") && rest.equals(List.of("--new-journal"))) {
        command.newJournal(dir);
        return 0;
      }
      if (args.get(0).equals("repair") && rest.equals(List.of("--new-state"))) {
        command.newState(dir);
        return 0;
      }
    } catch (IOException e) {
      err.println(args.get(0) + ": " + e.getMessage());
      return 1;
    }
    err.println(USAGE);
    return 2;
  }

  // --- check ---

  private int check(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      throw new IOException(dir + " is not a directory");
    }
    List<String> problems = new ArrayList<>();
    out.println("Data directory " + dir);
    if (held(dir)) {
      out.println("  a server holds it (" + dir.resolve(".lock") + "): read as it is now; a write under way shows as "
          + "a torn tail");
    }
    Path layout = dir.resolve(DataDir.LAYOUT_FILE);
    if (Files.exists(layout)) {
      String line = Files.readString(layout, StandardCharsets.UTF_8).strip();
      out.println("  " + DataDir.LAYOUT_FILE + ": \"" + line + "\"");
      if (!line.equals("roster data directory, layout " + DataDir.LAYOUT)) {
        problems.add(layout + " should read \"roster data directory, layout " + DataDir.LAYOUT + "\"");
      }
    } else {
      out.println("  " + DataDir.LAYOUT_FILE + ": missing (a server writes it when it starts on the directory)");
    }
    Path standalone = dir.resolve("standalone");
    if (Files.isDirectory(standalone)) {
      checkStandalone(standalone, problems);
    } else {
      out.println("  standalone/: none (no standalone server has kept durable state here)");
    }
    Path raft = dir.resolve("raft");
    if (Files.isDirectory(raft)) {
      try (Stream<Path> members = Files.list(raft)) {
        for (Path m : members.sorted().toList()) {
          long[] sizes = sizes(m);
          out.println("  raft/" + m.getFileName() + "/: a cluster member's Raft log and snapshots, " + sizes[0]
              + " files, " + sizes[1] + " bytes (not checked here: Apache Ratis checks its own log and snapshots "
              + "when the member starts)");
        }
      }
    }
    if (problems.isEmpty()) {
      out.println("Sound.");
      return 0;
    }
    out.println(problems.size() + (problems.size() == 1 ? " problem:" : " problems:"));
    problems.forEach(p -> out.println("- " + p));
    return 1;
  }

  private void checkStandalone(Path standalone, List<String> problems) {
    StoreFiles.StateFile state = null;
    StoreFiles.JournalFile journal = null;
    boolean readable = true;
    try {
      state = StoreFiles.readState(standalone.resolve("state"));
      out.println("  standalone/state: " + (state == null ? "none" : "format " + state.format() + ", generation "
          + state.generation() + ", " + state.facts().size() + " facts, " + state.bytes() + " bytes, checksum good"));
    } catch (IOException e) {
      problems.add(e.getMessage());
      readable = false;
    }
    try {
      journal = StoreFiles.readJournal(standalone.resolve("journal"));
      if (journal == null) {
        out.println("  standalone/journal: none");
      } else {
        out.println("  standalone/journal: format " + journal.format() + ", generation " + journal.generation() + ", "
            + journal.records().size() + " records, every checksum good, " + journal.bytes() + " bytes");
        StoreFiles.Torn torn = journal.torn();
        if (torn != null) {
          out.println("  standalone/journal: a torn tail of " + torn.bytes() + " bytes from byte " + torn.offset() + " ("
              + torn.what() + "): a write under way when the server stopped, never acknowledged; the next start "
              + "drops it");
        }
      }
    } catch (IOException e) {
      problems.add(e.getMessage());
      readable = false;
    }
    for (String leftover : List.of("state.tmp", "journal.tmp")) {
      if (Files.exists(standalone.resolve(leftover))) {
        out.println("  standalone/" + leftover + ": left by a compaction that stopped; the next start deletes it");
      }
    }
    if (!readable || (state == null && journal == null)) {
      return;
    }
    long from;
    try {
      from = StoreFiles.pair(state, journal, standalone);
    } catch (DataDir.Refused e) {
      problems.add(e.getMessage());
      return;
    }
    // pair() refuses a missing journal
    StoreFiles.JournalFile paired = java.util.Objects.requireNonNull(journal, "a pair has its journal");
    out.println("  the pair: " + (state == null ? "a journal with no state file before it"
        : "state and journal of generation " + paired.generation()
            + (from > paired.header() ? " (a compaction stopped before its new journal: the next start finishes it)" : "")));
    Facts facts = new Facts();
    if (state != null) {
      for (int i = 0; i < state.facts().size(); i++) {
        try {
          facts.apply(state.facts().get(i));
        } catch (RuntimeException e) {
          problems.add(state.path() + ": fact " + (i + 1) + " of " + state.facts().size() + " is invalid ("
              + e.getMessage() + ")");
          return;
        }
      }
    }
    for (StoreFiles.JournalRecord r : paired.records()) {
      if (r.offset() < from) {
        continue;
      }
      try {
        facts.apply(r.fact());
      } catch (RuntimeException e) {
        problems.add(journal.path() + ": the record at byte " + r.offset() + " holds an invalid fact (" + e.getMessage()
            + ")");
        return;
      }
    }
    out.println("  holds: " + facts.counts());
  }

  /** Whether a process holds {@code dir}'s lock (a server runs on it). */
  private static boolean held(Path dir) {
    Path lock = dir.resolve(".lock");
    if (!Files.exists(lock)) {
      return false;
    }
    try (FileChannel c = FileChannel.open(lock, StandardOpenOption.READ)) {
      FileLock l = c.tryLock(0, Long.MAX_VALUE, true);
      if (l == null) {
        return true;
      }
      l.release();
      return false;
    } catch (OverlappingFileLockException e) {
      return true; // this process holds it
    } catch (IOException e) {
      return false;
    }
  }

  private static long[] sizes(Path dir) throws IOException {
    long[] sizes = new long[2];
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        sizes[0]++;
        sizes[1] += Files.size(f);
      }
    }
    return sizes;
  }

  // --- repair ---

  /** Opens and locks {@code dir} for a repair: refused while a server runs on it. */
  private static DataDir lock(Path dir) throws IOException {
    if (!Files.isDirectory(dir.resolve("standalone"))) {
      throw new IOException(dir.resolve("standalone") + " is not there: repair works on a standalone server's data "
          + "directory; nothing was changed");
    }
    return DataDir.open(dir);
  }

  private void truncate(Path dir, long at) throws IOException {
    try (DataDir locked = lock(dir)) {
      Path file = locked.standalone().resolve("journal");
      if (!Files.exists(file)) {
        throw new IOException(file + " is not there; nothing was changed");
      }
      byte[] all = Files.readAllBytes(file);
      if (at >= all.length) {
        throw new IOException("--truncate-journal-at " + at + ": " + file + " has " + all.length + " bytes, so nothing "
            + "lies at or after that byte; nothing was changed");
      }
      StoreFiles.JournalFile kept;
      try {
        kept = StoreFiles.readJournal(file, Arrays.copyOf(all, (int) Math.max(at, 0)));
      } catch (DataDir.Refused e) {
        throw new IOException("--truncate-journal-at " + at + ": what would be kept does not read either, so this cut "
            + "would not be enough: " + e.getMessage(), e);
      }
      if (at < kept.header() || kept.torn() != null) {
        List<Long> starts = kept.records().stream().map(StoreFiles.JournalRecord::offset).toList();
        throw new IOException("--truncate-journal-at " + at + ": no record of " + file + " starts there (the first "
            + "starts at byte " + kept.header() + (starts.isEmpty() ? "" : "; the last before it at byte "
            + starts.get(starts.size() - 1) + ", the next ends at byte " + kept.end()) + "); nothing was changed");
      }
      Path cut = file.resolveSibling("journal.cut-at-" + at);
      Path tmp = file.resolveSibling("journal.cut-at-" + at + ".tmp");
      Files.write(tmp, Arrays.copyOfRange(all, (int) at, all.length));
      Durably.force(tmp);
      Durably.move(tmp, cut);
      try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE)) {
        c.truncate(at);
        c.force(true);
      }
      out.println("Cut " + file + " at byte " + at + ": dropped the " + (all.length - at) + " bytes from there to its "
          + "end (the record that did not read and every one after it), kept in " + cut + "; the journal keeps its "
          + kept.records().size() + " records before that byte. The next start reads it.");
    }
  }

  private void newJournal(Path dir) throws IOException {
    try (DataDir locked = lock(dir)) {
      Path standalone = locked.standalone();
      StoreFiles.StateFile state = StoreFiles.readState(standalone.resolve("state"));
      long generation = state == null ? 1 : state.generation();
      Path journal = standalone.resolve("journal");
      String old = "";
      if (Files.exists(journal)) {
        Path kept = standalone.resolve("journal.replaced-" + TIME.format(clock.get()));
        Durably.move(journal, kept);
        old = "; the journal that was there (" + Files.size(kept) + " bytes) is kept as " + kept
            + " and no longer read: the changes in it are lost to the server";
      }
      Path tmp = standalone.resolve("journal.tmp");
      Files.write(tmp, StoreFiles.journalHeader(generation));
      Durably.force(tmp);
      Durably.move(tmp, journal);
      out.println("Wrote an empty journal of generation " + generation + " in " + standalone
          + (state == null ? ", with no state file: the server starts empty" : " after the state file ("
          + state.facts().size() + " facts)") + old + ".");
    }
  }

  private void newState(Path dir) throws IOException {
    try (DataDir locked = lock(dir)) {
      Path standalone = locked.standalone();
      StoreFiles.JournalFile journal = StoreFiles.readJournal(standalone.resolve("journal"));
      if (journal == null || journal.empty()) {
        throw new IOException(standalone.resolve("journal") + " is " + (journal == null ? "missing" : "empty")
            + ": there are no changes to start from. To start empty, use --new-journal; nothing was changed");
      }
      Path state = standalone.resolve("state");
      String old = "";
      Path kept = null;
      if (Files.exists(state)) {
        kept = standalone.resolve("state.replaced-" + TIME.format(clock.get()));
      }
      Path tmp = standalone.resolve("state.tmp");
      Files.write(tmp, StoreFiles.stateFile(journal.generation(), journal.generation(), 0, List.of()));
      Durably.force(tmp);
      if (kept != null) {
        Durably.move(state, kept);
        old = "; the state file that was there (" + Files.size(kept) + " bytes) is kept as " + kept
            + " and no longer read: what it held is lost to the server";
      }
      Durably.move(tmp, state);
      out.println("Wrote an empty state file of generation " + journal.generation() + " in " + standalone
          + ": the server starts from the journal's " + journal.records().size() + " records alone" + old + ".");
    }
  }
}
