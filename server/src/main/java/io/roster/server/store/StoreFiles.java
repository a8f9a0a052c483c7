package io.roster.server.store;

import com.google.protobuf.InvalidProtocolBufferException;
import io.roster.proto.cluster.v1.Fact;
import io.roster.proto.cluster.v1.StoreHeader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

/**
 * A standalone server's state file and journal as they are on disk (docs/persistence.md, "How a
 * standalone server writes"), read and checked without changing them: {@link StateStore} opens them so,
 * and {@code check --data-dir} reports them. Every refusal is a {@link DataDir.Refused} naming the
 * file, what is wrong (the record and its byte, or which generation each file has) and what to do.
 *
 * <pre>
 * state    "RSTRSTAT", format (4 bytes), CRC-32C of the body (4), body length (8), body:
 *          a StoreHeader (format, facts, generation, the journal it was compacted from and its
 *          length), then that many facts, each length-delimited
 * journal  "RSTRJRNL", format (4), generation (8), CRC-32C of these 20 bytes (4) [formats 1, 2:
 *          "RSTRJRNL" and the format only, generation 0], then records: length (4), CRC-32C of
 *          the fact (4), the fact
 * </pre>
 *
 * Stateless.
 */
final class StoreFiles {

  /** The format of both files that this code writes; it reads every format up to it. */
  static final int FORMAT = 4;
  static final byte[] STATE_MAGIC = "RSTRSTAT".getBytes(StandardCharsets.US_ASCII);
  static final byte[] JOURNAL_MAGIC = "RSTRJRNL".getBytes(StandardCharsets.US_ASCII);
  /** A state file's bytes before its body. */
  static final int STATE_PREFIX = 24;
  /** A journal's header in formats 1 and 2: the magic word and the format. */
  static final int OLD_JOURNAL_HEADER = 12;
  /** A journal's header from format 3: the magic word, the format, the generation and their checksum. */
  static final int JOURNAL_HEADER = 24;
  /** A record's length and checksum. */
  static final int RECORD_HEAD = 8;
  /** A fact is a key and some settings: far below this; a larger length is damage. */
  static final int MAX_RECORD = 4 << 20;
  /** The unit a disk writes whole: a file's tail in which a whole sector reads zero never reached the disk. */
  static final int SECTOR = 512;

  private StoreFiles() {}

  /**
   * A state file read whole and checked.
   *
   * @param generation 0 in formats 1 and 2, which had none
   * @param journalGeneration the journal it was compacted from; -1 in formats 1 and 2
   * @param journalBytes that journal's length when this was written
   */
  record StateFile(Path path, long bytes, int format, long generation, long journalGeneration, long journalBytes,
      List<Fact> facts) {}

  /** One journal record that reads: where it starts, and the length of its fact. */
  record JournalRecord(long offset, int length, Fact fact) {
    long end() {
      return offset + RECORD_HEAD + length;
    }
  }

  /** The bytes after a journal's last whole record: a write the server did not finish, never acknowledged. */
  record Torn(long offset, long bytes, String what) {}

  /**
   * A journal read whole: its header, the records that read, and what was cut short at its end.
   *
   * @param format 0 for an empty file (0 bytes), which has no header
   * @param generation 0 in formats 1 and 2
   */
  record JournalFile(Path path, long bytes, int format, long generation, int header, List<JournalRecord> records,
      @Nullable Torn torn) {
    /** Where the records that read end: where the next one goes. */
    long end() {
      return torn == null ? bytes : torn.offset();
    }

    boolean empty() {
      return bytes == 0;
    }
  }

  // --- The state file ---

  /** Reads and checks {@code file}; null when there is none. */
  static @Nullable StateFile readState(Path file) throws IOException {
    if (!Files.exists(file)) {
      return null;
    }
    byte[] all = Files.readAllBytes(file);
    if (all.length < STATE_PREFIX || !Arrays.equals(all, 0, STATE_MAGIC.length, STATE_MAGIC, 0, STATE_MAGIC.length)) {
      throw damagedState(file, "it is not a Roster state file (" + all.length + " bytes, no RSTRSTAT header)");
    }
    ByteBuffer b = ByteBuffer.wrap(all, STATE_MAGIC.length, 16);
    int format = b.getInt();
    int crc = b.getInt();
    long length = b.getLong();
    checkFormat(file, format);
    if (length != all.length - STATE_PREFIX) {
      throw damagedState(file, "its header says " + length + " bytes of state and " + (all.length - STATE_PREFIX)
          + " follow");
    }
    if (crc(all, STATE_PREFIX, all.length - STATE_PREFIX) != crc) {
      throw damagedState(file, "its checksum does not match its content");
    }
    List<Fact> facts = new ArrayList<>();
    StoreHeader header;
    try (InputStream in = new ByteArrayInputStream(all, STATE_PREFIX, all.length - STATE_PREFIX)) {
      header = StoreHeader.parseDelimitedFrom(in);
      if (header == null) {
        throw damagedState(file, "it has no header message");
      }
      checkFormat(file, header.getFormat());
      for (int i = 0; i < header.getFacts(); i++) {
        Fact f = Fact.parseDelimitedFrom(in);
        if (f == null) {
          throw damagedState(file, "it ends after " + i + " of " + header.getFacts() + " facts");
        }
        facts.add(f);
      }
    } catch (InvalidProtocolBufferException | RuntimeException e) {
      throw damagedState(file, "its content does not parse (" + e.getMessage() + ")");
    }
    if (format < 3) {
      return new StateFile(file, all.length, format, 0, -1, 0, facts);
    }
    return new StateFile(file, all.length, format, header.getGeneration(), header.getJournalGeneration(),
        header.getJournalBytes(), facts);
  }

  /** A state file of {@code facts} with its header, as {@link #readState} reads it. */
  static byte[] stateFile(long generation, long journalGeneration, long journalBytes, List<Fact> facts) {
    try {
      java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
      StoreHeader.newBuilder().setFormat(FORMAT).setFacts(facts.size()).setGeneration(generation)
          .setJournalGeneration(journalGeneration).setJournalBytes(journalBytes).build().writeDelimitedTo(body);
      for (Fact f : facts) {
        f.writeDelimitedTo(body);
      }
      byte[] b = body.toByteArray();
      return ByteBuffer.allocate(STATE_PREFIX + b.length).put(STATE_MAGIC).putInt(FORMAT).putInt(crc(b, 0, b.length))
          .putLong(b.length).put(b).array();
    } catch (IOException e) {
      throw new IllegalStateException("writing to memory", e);
    }
  }

  // --- The journal ---

  /** A journal's header: its format and generation, checksummed. */
  static byte[] journalHeader(long generation) {
    ByteBuffer b = ByteBuffer.allocate(JOURNAL_HEADER).put(JOURNAL_MAGIC).putInt(FORMAT).putLong(generation);
    return b.putInt(crc(b.array(), 0, JOURNAL_HEADER - 4)).array();
  }

  /**
   * Reads and checks {@code file}; null when there is none. A record cut short at the very end,
   * or one whose last bytes read zero from a sector's start to the end of the file (the file's
   * length reached the disk and its data did not), is the write that was under way when the
   * server stopped: never acknowledged, it is returned as {@link JournalFile#torn}. Any other
   * record that does not read, the last one too, is damage, refused naming its number and byte.
   */
  static @Nullable JournalFile readJournal(Path file) throws IOException {
    if (!Files.exists(file)) {
      return null;
    }
    return readJournal(file, Files.readAllBytes(file));
  }

  /** Reads and checks {@code all} as the journal {@code file}'s bytes (see {@link #readJournal(Path)}). */
  static JournalFile readJournal(Path file, byte[] all) throws DataDir.Refused {
    if (all.length == 0) {
      return new JournalFile(file, 0, 0, 0, 0, List.of(), null);
    }
    if (all.length < OLD_JOURNAL_HEADER
        || !Arrays.equals(all, 0, JOURNAL_MAGIC.length, JOURNAL_MAGIC, 0, JOURNAL_MAGIC.length)) {
      throw damagedJournal(file, "it is not a Roster journal (" + all.length + " bytes, no RSTRJRNL header)");
    }
    int format = ByteBuffer.wrap(all, JOURNAL_MAGIC.length, 4).getInt();
    checkFormat(file, format);
    long generation = 0;
    int header = OLD_JOURNAL_HEADER;
    if (format >= 3) {
      if (all.length < JOURNAL_HEADER) {
        throw damagedJournal(file, "its header is cut short (" + all.length + " of " + JOURNAL_HEADER + " bytes)");
      }
      ByteBuffer b = ByteBuffer.wrap(all, OLD_JOURNAL_HEADER, 12);
      generation = b.getLong();
      if (crc(all, 0, JOURNAL_HEADER - 4) != b.getInt()) {
        throw damagedJournal(file, "its header's checksum does not match it");
      }
      header = JOURNAL_HEADER;
    }
    List<JournalRecord> records = new ArrayList<>();
    Torn torn = null;
    int at = header;
    while (at < all.length) {
      int left = all.length - at;
      if (zeros(all, at, all.length)) {
        torn = new Torn(at, left, "zeros where a record should be (the file's length reached the disk, its data did "
            + "not)");
        break;
      }
      if (left < RECORD_HEAD) {
        torn = new Torn(at, left, "a record cut short");
        break;
      }
      ByteBuffer b = ByteBuffer.wrap(all, at, RECORD_HEAD);
      int length = b.getInt();
      int crc = b.getInt();
      if (length < 1 || length > MAX_RECORD) {
        throw damagedRecord(file, records.size() + 1, at, "claims " + length + " bytes", all.length - at);
      }
      if (left - RECORD_HEAD < length) {
        torn = new Torn(at, left, "a record cut short (" + (left - RECORD_HEAD) + " of its " + length + " bytes)");
        break;
      }
      int next = at + RECORD_HEAD + length;
      if (crc(all, at + RECORD_HEAD, length) != crc) {
        if (next == all.length && zeroSectorToEnd(all, at)) {
          torn = new Torn(at, left, "a record whose last bytes read zero from a sector's start (the file's length "
              + "reached the disk, the rest of its data did not)");
          break;
        }
        throw damagedRecord(file, records.size() + 1, at, "of " + length + " bytes fails its checksum",
            all.length - next);
      }
      Fact fact;
      try {
        fact = Fact.parseFrom(ByteBuffer.wrap(all, at + RECORD_HEAD, length));
      } catch (InvalidProtocolBufferException e) {
        throw damagedRecord(file, records.size() + 1, at, "does not parse (" + e.getMessage() + ")",
            all.length - next);
      }
      records.add(new JournalRecord(at, length, fact));
      at = next;
    }
    return new JournalFile(file, all.length, format, generation, header, records, torn);
  }

  /** Whether every byte of {@code b} from {@code from} to {@code to} is zero. */
  private static boolean zeros(byte[] b, int from, int to) {
    for (int i = from; i < to; i++) {
      if (b[i] != 0) {
        return false;
      }
    }
    return true;
  }

  /** Whether the bytes of the record at {@code at} read zero from a sector boundary inside it to the end. */
  private static boolean zeroSectorToEnd(byte[] b, int at) {
    int zeroFrom = b.length;
    while (zeroFrom > at && b[zeroFrom - 1] == 0) {
      zeroFrom--;
    }
    long boundary = ((long) Math.max(zeroFrom, at + 1) + SECTOR - 1) / SECTOR * SECTOR;
    return boundary < b.length;
  }

  // --- The pair ---

  /**
   * Checks that {@code state} and {@code journal} belong together and returns the byte of the
   * journal from which its records are read on top of the state: its first record, or, after a
   * compaction that stopped before its new journal was in place, the byte the state was
   * compacted up to. Refuses, naming what is missing and what to do, a missing or empty journal,
   * a missing state where the journal continues one, and files of two different pairs.
   *
   * @param journal null or empty: there is none (and {@code state} is not null)
   */
  static long pair(@Nullable StateFile state, @Nullable JournalFile journal, Path storeDir) throws DataDir.Refused {
    Path stateFile = storeDir.resolve("state");
    Path journalFile = storeDir.resolve("journal");
    String dataDir = dataDir(storeDir);
    if (journal == null || journal.empty()) {
      String what = journalFile + (journal == null ? " is missing" : " is empty (0 bytes)");
      if (state == null) {
        throw new DataDir.Refused(what + ", and there is no state file: what it held is unknown. Roster does not "
            + "start on it; nothing was changed. Put the journal back (from where it was moved, or a copy of the data "
            + "directory), or restore a backup into a new data directory (--restore FILE); or, knowing that whatever "
            + "it held is lost, start empty: " + repair(dataDir, "--new-journal"));
      }
      throw new DataDir.Refused(what + ", but " + stateFile + " (generation " + state.generation() + ") is there: "
          + "the journal holds every change since that state was written, and without it they would be lost. "
          + "Roster does not start without it; nothing was changed. Put the journal back (from where it was moved, "
          + "or a copy of the data directory taken with both files), or restore a backup into a new data directory "
          + "(--restore FILE); or, knowing that those changes are lost, start from the state file alone: "
          + repair(dataDir, "--new-journal"));
    }
    if (state == null) {
      if (journal.generation() > 1) {
        throw new DataDir.Refused(stateFile + " is missing, but " + journalFile + " is of generation "
            + journal.generation() + ": it holds only the changes made since the state file of that generation "
            + "was written, and that state (the service settings, holds and persistent instances written before "
            + "it) would be lost. Roster does not start without it; nothing was changed. Put the state file back "
            + "(from where it was moved, or a copy of the data directory taken with both files), or restore a "
            + "backup into a new data directory (--restore FILE); or, knowing that everything written before that "
            + "state is lost, start from the journal's changes alone: " + repair(dataDir, "--new-state"));
      }
      return journal.header(); // a new directory's first journal (1), or one of formats 1 and 2 (0): no state before it
    }
    if (journal.generation() == state.generation()) {
      return journal.header();
    }
    if (journal.generation() == state.journalGeneration() && state.generation() > journal.generation()) {
      // The compaction wrote the state and stopped before its new journal replaced this one.
      if (journal.end() < state.journalBytes()) {
        throw new DataDir.Refused(stateFile + " (generation " + state.generation() + ") was compacted from "
            + journalFile + " of generation " + journal.generation() + " up to byte " + state.journalBytes()
            + ", and that journal has only " + journal.end() + " bytes: it is an older copy. Roster does not start "
            + "on it; nothing was changed. Put back the journal that was beside the state file, or restore a backup "
            + "into a new data directory (--restore FILE); or, knowing that the changes since that state are lost, "
            + "start from the state file alone: " + repair(dataDir, "--new-journal"));
      }
      return state.journalBytes();
    }
    boolean journalNewer = journal.generation() > state.generation();
    throw new DataDir.Refused(stateFile + " is of generation " + state.generation() + " and " + journalFile
        + " of generation " + journal.generation() + ": they are not a pair (the " + (journalNewer ? "state file" : "journal")
        + " is an older copy, or the two come from different copies of the data directory), and read together they "
        + "would bring back an old state. Roster does not start on them; nothing was changed. Put back the "
        + (journalNewer ? "state file of generation " + journal.generation() : "journal of generation " + state.generation())
        + " from the copy the other file came from, or restore a backup into a new data directory (--restore FILE); "
        + "or, knowing what is lost, keep one of them: " + repair(dataDir, "--new-journal") + " (the state file, "
        + "without the journal's changes) or " + repair(dataDir, "--new-state") + " (the journal's changes alone)");
  }

  // --- Refusals ---

  static void checkFormat(Path file, int format) throws DataDir.Refused {
    if (format > FORMAT || format < 1) {
      throw new DataDir.Refused(file + " is in format " + format + ", and this Roster reads formats up to " + FORMAT
          + ": start a Roster at least as new as the one that wrote it; nothing was changed");
    }
  }

  private static DataDir.Refused damagedState(Path file, String why) {
    String dataDir = dataDir(parent(file));
    return new DataDir.Refused(file + " is damaged: " + why + ". Roster does not start on state it cannot read; "
        + "nothing was changed. " + check(dataDir) + " reports the whole directory. Put back a sound copy of the file "
        + "(one taken with its journal), or restore a backup into a new data directory (--restore FILE); or, knowing "
        + "that every setting, hold and persistent instance written before the journal's changes is lost, start from "
        + "the journal's changes alone: " + repair(dataDir, "--new-state") + " (it keeps the damaged file as "
        + "state.replaced-TIME)");
  }

  private static DataDir.Refused damagedJournal(Path file, String why) {
    String dataDir = dataDir(parent(file));
    return new DataDir.Refused(file + " is damaged: " + why + ". Roster does not start on state it cannot read; "
        + "nothing was changed. " + check(dataDir) + " reports the whole directory. Put back a sound copy of the "
        + "file, or restore a backup into a new data directory (--restore FILE); or, knowing that the changes since "
        + "the last compaction are lost, start from the state file alone: " + repair(dataDir, "--new-journal")
        + " (it keeps the damaged file as journal.replaced-TIME)");
  }

  private static DataDir.Refused damagedRecord(Path file, int record, long at, String what, long following) {
    String dataDir = dataDir(parent(file));
    return new DataDir.Refused(file + " is damaged: record " + record + " at byte " + at + " " + what
        + (following > 0 ? ", and " + following + " bytes follow it" : ", and it is the last one") + ". A whole "
        + "record that does not read was changed after it was written, so Roster does not drop it as a write cut "
        + "short; it does not start on it, and nothing was changed. " + check(dataDir) + " reports the whole "
        + "directory. Put back a sound copy of the file, or restore a backup into a new data directory "
        + "(--restore FILE); or, knowing that this record and every one after it are lost, cut the journal there: "
        + repair(dataDir, "--truncate-journal-at " + at) + " (it keeps the bytes it cuts in journal.cut-at-" + at + ")");
  }

  /** The directory of a store file: every one is its directory's {@code resolve(name)}. */
  private static Path parent(Path file) {
    return java.util.Objects.requireNonNull(file.getParent(), file + " has no directory");
  }

  private static String dataDir(Path storeDir) {
    Path parent = storeDir.toAbsolutePath().getParent();
    return (parent == null ? storeDir.toAbsolutePath() : parent).toString();
  }

  private static String check(String dataDir) {
    return "`java -jar roster-server.jar check --data-dir " + dataDir + "`";
  }

  private static String repair(String dataDir, String what) {
    return "`java -jar roster-server.jar repair --data-dir " + dataDir + " " + what + "`";
  }

  static int crc(byte[] b, int off, int len) {
    CRC32C c = new CRC32C();
    c.update(b, off, len);
    return (int) c.getValue();
  }
}
