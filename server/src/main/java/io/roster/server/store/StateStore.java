package io.roster.server.store;

import io.roster.proto.cluster.v1.Fact;
import io.roster.proto.cluster.v1.Hold;
import io.roster.proto.cluster.v1.NamespaceFact;
import io.roster.proto.cluster.v1.PersistentInstance;
import io.roster.server.codec.ValueCodec;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Namespace;
import io.roster.server.registry.ServiceSettings;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A standalone server's durable state (docs/persistence.md): the operator's settings of services
 * and holds of instances, and the persistent instances, in {@code DIR/standalone/}. Each change is a {@link Fact} appended to
 * the journal and forced to the disk before the call returns, so before the client hears "ok";
 * after {@code compactAfter} facts the whole state is written to the state file (a new file,
 * forced, then renamed over the old one) and the journal starts again.
 *
 * <p>The two files are a pair: the state file and the journal name one generation in their
 * headers, and each compaction writes the next (decision 85). Opening checks the pair and every
 * checksum ({@link StoreFiles}): a record cut short at the very end of the journal is the write a
 * crash interrupted before it was acknowledged, dropped with a WARN; anything else (a damaged
 * record, the last one too; a missing, empty or mismatched file; a format newer than this code
 * reads) throws a {@link DataDir.Refused} naming the file and what to do, and the server does not
 * start: nothing is skipped or wiped.
 *
 * <p>A write that fails part-way (a full disk, a failed {@code fsync}) is cut back: the journal is
 * truncated to the end of the last record whose force succeeded, and forced, before the write is
 * refused, so the next record follows a whole one (decision 84). While the journal cannot be cut
 * back, every write is refused, saying why; each one tries again first.
 *
 * <p>Thread-safe: writes are serialised.
 */
public final class StateStore implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(StateStore.class);
  /**
   * The format of both files that this code writes; it reads every format up to it. Format 2 added
   * the clusters' health checks to a service's settings, which a format-1 reader would drop;
   * format 3 the generation that makes the two files a pair; format 4 the created namespaces, which a
   * format-3 reader would drop. Files of an older format are
   * rewritten in this one when the store opens, before anything is added.
   */
  public static final int FORMAT = StoreFiles.FORMAT;

  /** One instance of one service. */
  public record InstanceRef(ServiceKey service, InstanceKey key) {}

  /** A persistent instance as stored, and the identity that registered it (empty with auth off). */
  public record Stored(Instance instance, String identity) {}

  /**
   * The durable state: settings by service (defaults left out), the holds, the persistent instances
   * and the created namespaces.
   */
  public record State(Map<ServiceKey, ServiceSettings> settings, Set<InstanceRef> holds, Map<InstanceRef, Stored> persistent,
      List<Namespace> namespaces) {
    public State {
      settings = Map.copyOf(settings);
      holds = Set.copyOf(holds);
      persistent = Map.copyOf(persistent);
      namespaces = List.copyOf(namespaces);
    }
  }

  /** Opens files for writing; tests give channels that fail. */
  @FunctionalInterface
  interface Channels {
    FileChannel open(Path file, OpenOption... options) throws IOException;
  }

  /** The directory of the state file and the journal. */
  private final Path dir;
  private final Path stateFile;
  private final Path journalFile;
  private final int compactAfter;
  private final Channels channels;
  private final Facts facts;
  private FileChannel journal;
  /** Records in the journal. */
  private int journalFacts;
  /** The journal's generation (0: formats 1 and 2). */
  private long generation;
  /** The state file's generation; 0: none, or formats 1 and 2. */
  private long stateGeneration;
  /** Where the journal's last record whose force succeeded ends: the next one goes there. */
  private long end;
  /** Why the journal may hold bytes past {@link #end} that could not be cut off; null while it holds none. */
  private @Nullable String unsure;

  private StateStore(Path dir, int compactAfter, Channels channels, Facts facts, Opened opened) {
    this.dir = dir;
    this.stateFile = dir.resolve("state");
    this.journalFile = dir.resolve("journal");
    this.compactAfter = compactAfter;
    this.channels = channels;
    this.facts = facts;
    this.journal = opened.channel();
    this.generation = opened.generation();
    this.end = opened.end();
    this.journalFacts = opened.records();
  }

  /** A journal open for appending: its generation, where its next record goes, and how many it holds. */
  private record Opened(FileChannel channel, long generation, long end, int records) {}

  /**
   * Reads the state in {@code dir} (created if needed) and opens its journal for writing.
   *
   * @param compactAfter journal facts after which the state file is rewritten
   * @throws DataDir.Refused when a file is damaged, missing from its pair or of an unknown format
   */
  public static StateStore open(Path dir, int compactAfter) throws IOException {
    return open(dir, compactAfter, FileChannel::open);
  }

  static StateStore open(Path dir, int compactAfter, Channels channels) throws IOException {
    Files.createDirectories(dir);
    StoreFiles.StateFile state = StoreFiles.readState(dir.resolve("state"));
    StoreFiles.JournalFile read = StoreFiles.readJournal(dir.resolve("journal"));
    Facts facts = new Facts();
    if (state == null && read == null) {
      // A new directory: a first journal, which no state file comes before.
      deleteLeftovers(dir);
      return new StateStore(dir, compactAfter, channels, facts, install(channels, dir, 1));
    }
    long from = StoreFiles.pair(state, read, dir);
    if (read == null) {
      throw new IllegalStateException("pair() refuses a missing journal");
    }
    if (state != null) {
      for (int i = 0; i < state.facts().size(); i++) {
        try {
          facts.apply(state.facts().get(i));
        } catch (RuntimeException e) {
          throw new DataDir.Refused(state.path() + " holds an invalid fact (" + (i + 1) + " of " + state.facts().size()
              + ": " + e.getMessage() + "); `java -jar roster-server.jar check --data-dir " + dir.toAbsolutePath()
              .getParent() + "` reports the directory. Roster does not start on it; nothing was changed");
        }
      }
    }
    for (int i = 0; i < read.records().size(); i++) {
      StoreFiles.JournalRecord r = read.records().get(i);
      if (r.offset() >= from) {
        try {
          facts.apply(r.fact());
        } catch (RuntimeException e) {
          throw new DataDir.Refused(read.path() + ": record " + (i + 1) + " at byte " + r.offset() + " holds an invalid "
              + "fact (" + e.getMessage() + "); `java -jar roster-server.jar check --data-dir " + dir.toAbsolutePath()
              .getParent() + "` reports the directory. Roster does not start on it; nothing was changed");
        }
      }
    }
    deleteLeftovers(dir);
    FileChannel c = channels.open(read.path(), StandardOpenOption.WRITE);
    StoreFiles.Torn torn = read.torn();
    try {
      if (torn != null) {
        log.warn("{}: dropped the last {} bytes, from byte {} (after record {}): {}. It is the write that was under "
            + "way when the server stopped (a crash or kill), which was never acknowledged", read.path(), torn.bytes(),
            torn.offset(), read.records().size(), torn.what());
        c.truncate(torn.offset());
        c.force(true);
      }
    } catch (IOException e) {
      c.close();
      throw e;
    }
    StateStore store = new StateStore(dir, compactAfter, channels, facts,
        new Opened(c, read.generation(), read.end(), read.records().size()));
    store.stateGeneration = state == null ? 0 : state.generation();
    int oldest = Math.min(read.format(), state == null ? FORMAT : state.format());
    boolean cutShort = state != null && state.generation() != read.generation();
    if (oldest < FORMAT || cutShort) {
      try {
        synchronized (store) {
          store.compact();
        }
      } catch (IOException e) {
        store.close();
        throw new IOException("cannot write a new state file in " + dir + " (" + e.getMessage() + "), which it needs "
            + (cutShort ? "after a compaction that stopped" : "to rewrite files of format " + oldest + " in format "
            + FORMAT) + " before taking changes: is its file system full?", e);
      }
      if (cutShort) {
        log.info("{}: the last compaction stopped before its new journal was in place; wrote the state again, with "
            + "the {} bytes the old journal took after it", store, read.end() - from);
      } else {
        log.info("{}: rewrote the state written in format {} in format {}", store, oldest, FORMAT);
      }
    }
    return store;
  }

  /**
   * Writes an empty journal of {@code generation} as {@code journal.tmp}, forced, opens it, and
   * renames it over {@code journal}: a channel that stays on the file whatever the rename does.
   */
  private static Opened install(Channels channels, Path dir, long generation) throws IOException {
    Path fresh = dir.resolve("journal.tmp");
    FileChannel c = null;
    try {
      writeFile(channels, fresh, StoreFiles.journalHeader(generation));
      c = channels.open(fresh, StandardOpenOption.WRITE);
      Durably.move(fresh, dir.resolve("journal"));
      return new Opened(c, generation, StoreFiles.JOURNAL_HEADER, 0);
    } catch (IOException | RuntimeException e) {
      if (c != null) {
        c.close();
      }
      deleteQuietly(fresh, e);
      throw e;
    }
  }

  /**
   * Deletes what a compaction that did not finish wrote, which nothing names and which takes room:
   * only once the files read and pair, so that a refused start changes nothing.
   */
  private static void deleteLeftovers(Path dir) throws IOException {
    Files.deleteIfExists(dir.resolve("state.tmp"));
    Files.deleteIfExists(dir.resolve("journal.tmp"));
  }

  /** Deletes a file a failed step left, which takes room and that nothing names; a failure joins {@code cause}. */
  private static void deleteQuietly(Path file, Exception cause) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      cause.addSuppressed(e);
    }
  }

  /** Writes {@code bytes} as {@code file}, replacing it, and forces it. */
  private static void writeFile(Channels channels, Path file, byte[] bytes) throws IOException {
    try (FileChannel c = channels.open(file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
        StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.wrap(bytes);
      while (b.hasRemaining()) {
        c.write(b);
      }
      c.force(true);
    }
  }

  /** The state as it is now. */
  public synchronized State state() {
    return facts.state();
  }

  /** Records a service's settings (the defaults: none kept); returns once they are on the disk. */
  public void settings(ServiceKey service, ServiceSettings value) throws IOException {
    write(List.of(settingsFact(service, value)));
  }

  /** Records whether an operator holds an instance; returns once it is on the disk. */
  public void hold(ServiceKey service, InstanceKey key, boolean held) throws IOException {
    hold(List.of(new InstanceRef(service, key)), held);
  }

  /** Records holds set or ended together: one write, forced once. */
  public void hold(List<InstanceRef> keys, boolean held) throws IOException {
    write(keys.stream().map(k -> holdFact(k, held)).toList());
  }

  /** Records a persistent instance as stored (null: deregistered); returns once it is on the disk. */
  public void persistent(ServiceKey service, InstanceKey key, @Nullable Stored stored) throws IOException {
    write(List.of(Fact.newBuilder().setPersistent(persistentFact(service, key, stored)).build()));
  }

  /** Records a created namespace as it now is (null: deleted); returns once it is on the disk. */
  public void namespace(String id, @Nullable Namespace namespace) throws IOException {
    write(List.of(namespaceFact(id, namespace)));
  }

  static Fact namespaceFact(String id, @Nullable Namespace namespace) {
    NamespaceFact.Builder b = NamespaceFact.newBuilder().setId(id);
    if (namespace != null) {
      b.setNamespace(ValueCodec.namespace(namespace));
    }
    return Fact.newBuilder().setNamespace(b).build();
  }

  static Fact settingsFact(ServiceKey service, ServiceSettings value) {
    return Fact.newBuilder().setSettings(ValueCodec.settings(service, value)).build();
  }

  static Fact holdFact(InstanceRef ref, boolean held) {
    return Fact.newBuilder().setHold(Hold.newBuilder().setService(ValueCodec.service(ref.service()))
        .setKey(ValueCodec.key(ref.key())).setHeld(held)).build();
  }

  static PersistentInstance persistentFact(ServiceKey service, InstanceKey key, @Nullable Stored stored) {
    PersistentInstance.Builder b = PersistentInstance.newBuilder().setService(ValueCodec.service(service))
        .setKey(ValueCodec.key(key));
    if (stored != null) {
      b.setInstance(ValueCodec.instance(stored.instance())).setIdentity(stored.identity());
    }
    return b.build();
  }

  /** {@code facts} as journal records: length, CRC-32C, fact. */
  static byte[] records(List<Fact> facts) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    for (Fact f : facts) {
      byte[] payload = f.toByteArray();
      bytes.writeBytes(ByteBuffer.allocate(StoreFiles.RECORD_HEAD).putInt(payload.length)
          .putInt(StoreFiles.crc(payload, 0, payload.length)).array());
      bytes.writeBytes(payload);
    }
    return bytes.toByteArray();
  }

  private synchronized void write(List<Fact> written) throws IOException {
    if (written.isEmpty()) {
      return;
    }
    if (unsure != null) {
      cutBack(null); // throws while it still cannot
    }
    byte[] bytes = records(written);
    try {
      ByteBuffer buf = ByteBuffer.wrap(bytes);
      long at = end;
      while (buf.hasRemaining()) {
        at += journal.write(buf, at);
      }
      journal.force(false);
    } catch (IOException e) {
      // Part of the records may be in the file, or all of them with a force that failed (the disk
      // may hold any part of them, whatever the page cache says now): cut back to what the last
      // force got to, so the next record follows a whole one and a refused change is not read back.
      cutBack(e);
      throw e;
    }
    end += bytes.length;
    written.forEach(facts::apply);
    journalFacts += written.size();
    if (journalFacts >= compactAfter) {
      try {
        compact();
      } catch (IOException e) {
        // The facts are on disk in the journal: the write stands, and the next one tries again.
        log.warn("Could not compact {} into a new state file ({}); the journal keeps growing until it can", this,
            e.toString());
      }
    }
  }

  /**
   * Truncates the journal to {@link #end} and forces it: after {@code failed}, a write that failed,
   * or (null) before a write while an earlier cut failed. When it cannot, writes are refused until
   * it can, and an ERROR says so once.
   *
   * @throws IOException when called before a write ({@code failed} null) and the journal still cannot be cut back
   */
  private void cutBack(@Nullable IOException failed) throws IOException {
    try {
      journal.truncate(end);
      journal.force(true);
    } catch (IOException e) {
      boolean first = unsure == null;
      unsure = "the journal could not be cut back to byte " + end + " after a write that failed (" + e.getMessage()
          + "), and no durable change is written until it can, so that none lands after a damaged record";
      if (first) {
        log.error("{}: {}. Each durable change tries again first; a restart drops the unfinished record", journalFile,
            unsure, e);
      }
      if (failed == null) {
        throw new IOException(unsure, e);
      }
      failed.addSuppressed(e);
      return;
    }
    if (unsure != null) {
      log.warn("{}: cut back to byte {}; durable changes are written again", journalFile, end);
      unsure = null;
    }
  }

  /**
   * Writes the whole state to a new state file of the next generation, then starts an empty
   * journal of that generation. The state file's rename is the step that counts: should the new
   * journal fail after it, the old one keeps taking writes, and a start reads it on from where the
   * state file says it was compacted.
   */
  private void compact() throws IOException {
    long next = Math.max(stateGeneration, Math.max(generation, 1)) + 1;
    List<Fact> all = new ArrayList<>(facts.size());
    facts.settings.forEach((service, value) -> all.add(settingsFact(service, value)));
    facts.holds.forEach(h -> all.add(holdFact(h, true)));
    facts.persistent.forEach((ref, stored) -> all.add(Fact.newBuilder()
        .setPersistent(persistentFact(ref.service(), ref.key(), stored)).build()));
    facts.namespaces.forEach((id, n) -> all.add(namespaceFact(id, n)));
    Path tmp = stateFile.resolveSibling("state.tmp");
    try {
      writeFile(channels, tmp, StoreFiles.stateFile(next, generation, end, all));
      Durably.move(tmp, stateFile);
    } catch (IOException | RuntimeException e) {
      deleteQuietly(tmp, e);
      throw e;
    }
    stateGeneration = next;
    Opened fresh = install(channels, dir, next);
    FileChannel old = journal;
    journal = fresh.channel();
    generation = next;
    end = fresh.end();
    journalFacts = 0;
    unsure = null; // the old journal's unfinished bytes no longer matter
    old.close();
  }

  @Override
  public String toString() {
    return dir.toString();
  }

  @Override
  public synchronized void close() throws IOException {
    journal.close();
  }
}
