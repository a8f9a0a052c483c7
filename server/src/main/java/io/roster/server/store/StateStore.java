package io.roster.server.store;

import com.google.protobuf.InvalidProtocolBufferException;
import io.roster.proto.cluster.v1.Fact;
import io.roster.proto.cluster.v1.Hold;
import io.roster.proto.cluster.v1.PersistentInstance;
import io.roster.proto.cluster.v1.SettingsState;
import io.roster.proto.cluster.v1.StoreHeader;
import io.roster.server.cluster.LogCodec;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.ServiceSettings;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32C;
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
 * <p>Both files start with a magic word and their format; every journal record and the state
 * file's body carry a CRC-32C. Reading them back, a record cut short at the very end of the
 * journal is a write the crash interrupted before it was acknowledged: it is dropped, with a
 * WARN. Anything else unreadable (a bad checksum before the end, a format newer than this code
 * reads, a file that is not Roster's) throws a {@link DataDir.Refused} naming the file and what
 * to do, and the server does not start: nothing is skipped or wiped.
 *
 * <p>Thread-safe: writes are serialised.
 */
public final class StateStore implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(StateStore.class);
  /**
   * The format of both files that this code writes; it reads every format up to it. Format 2 adds
   * the clusters' health checks to a service's settings, which a format-1 reader would drop: files
   * of an older format are rewritten in this one when the store opens, before anything is added.
   */
  public static final int FORMAT = 2;
  static final byte[] STATE_MAGIC = "RSTRSTAT".getBytes(StandardCharsets.US_ASCII);
  static final byte[] JOURNAL_MAGIC = "RSTRJRNL".getBytes(StandardCharsets.US_ASCII);
  private static final int JOURNAL_HEADER = 12;
  /** A fact is a key and some settings: far below this; a larger length is damage. */
  private static final int MAX_RECORD = 4 << 20;

  /** One instance of one service. */
  public record InstanceRef(ServiceKey service, InstanceKey key) {}

  /** A persistent instance as stored, and the identity that registered it (empty with auth off). */
  public record Stored(Instance instance, String identity) {}

  /** The durable state: settings by service (defaults left out), the holds and the persistent instances. */
  public record State(Map<ServiceKey, ServiceSettings> settings, Set<InstanceRef> holds, Map<InstanceRef, Stored> persistent) {
    public State {
      settings = Map.copyOf(settings);
      holds = Set.copyOf(holds);
      persistent = Map.copyOf(persistent);
    }
  }

  private final Path stateFile;
  private final Path journalFile;
  private final int compactAfter;
  private final Map<ServiceKey, ServiceSettings> settings = new HashMap<>();
  private final Set<InstanceRef> holds = new LinkedHashSet<>();
  private final Map<InstanceRef, Stored> persistent = new java.util.LinkedHashMap<>();
  private FileChannel journal;
  private int journalFacts;
  /** The format of the journal as it was opened (a new journal's is {@link #FORMAT}). */
  private int journalFormat = FORMAT;

  private StateStore(Path dir, int compactAfter) {
    this.stateFile = dir.resolve("state");
    this.journalFile = dir.resolve("journal");
    this.compactAfter = compactAfter;
  }

  /**
   * Reads the state in {@code dir} (created if needed) and opens its journal for writing.
   *
   * @param compactAfter journal facts after which the state file is rewritten
   * @throws DataDir.Refused when a file is damaged or of an unknown format
   */
  public static StateStore open(Path dir, int compactAfter) throws IOException {
    Files.createDirectories(dir);
    StateStore store = new StateStore(dir, compactAfter);
    int oldest = FORMAT;
    if (Files.exists(store.stateFile)) {
      oldest = store.readState();
    }
    store.journal = store.openJournal();
    oldest = Math.min(oldest, store.journalFormat);
    if (oldest < FORMAT) {
      synchronized (store) {
        store.compact();
      }
      log.info("{}: rewrote the state written in format {} in format {}", store, oldest, FORMAT);
    }
    return store;
  }

  /** The state as it is now. */
  public synchronized State state() {
    return new State(settings, holds, persistent);
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

  static Fact settingsFact(ServiceKey service, ServiceSettings value) {
    return Fact.newBuilder().setSettings(LogCodec.settings(service, value)).build();
  }

  static Fact holdFact(InstanceRef ref, boolean held) {
    return Fact.newBuilder().setHold(Hold.newBuilder().setService(LogCodec.service(ref.service()))
        .setKey(LogCodec.key(ref.key())).setHeld(held)).build();
  }

  static PersistentInstance persistentFact(ServiceKey service, InstanceKey key, @Nullable Stored stored) {
    PersistentInstance.Builder b = PersistentInstance.newBuilder().setService(LogCodec.service(service))
        .setKey(LogCodec.key(key));
    if (stored != null) {
      b.setInstance(LogCodec.instance(stored.instance())).setIdentity(stored.identity());
    }
    return b.build();
  }

  private synchronized void write(List<Fact> facts) throws IOException {
    if (facts.isEmpty()) {
      return;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    for (Fact f : facts) {
      byte[] payload = f.toByteArray();
      ByteBuffer head = ByteBuffer.allocate(8).putInt(payload.length).putInt(crc(payload, 0, payload.length));
      bytes.write(head.array());
      bytes.write(payload);
    }
    ByteBuffer buf = ByteBuffer.wrap(bytes.toByteArray());
    while (buf.hasRemaining()) {
      journal.write(buf);
    }
    journal.force(false);
    facts.forEach(this::apply);
    journalFacts += facts.size();
    if (journalFacts >= compactAfter) {
      try {
        compact();
      } catch (IOException e) {
        // The facts are on disk in the journal: the write stands, and the next one tries again.
        log.warn("Could not compact {} into a new state file; the journal keeps growing until it can", this, e);
      }
    }
  }

  /** Writes the whole state to a new state file and starts an empty journal. */
  private void compact() throws IOException {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    StoreHeader.newBuilder().setFormat(FORMAT).setFacts(settings.size() + holds.size() + persistent.size()).build()
        .writeDelimitedTo(body);
    for (Map.Entry<ServiceKey, ServiceSettings> e : settings.entrySet()) {
      settingsFact(e.getKey(), e.getValue()).writeDelimitedTo(body);
    }
    for (InstanceRef h : holds) {
      holdFact(h, true).writeDelimitedTo(body);
    }
    for (Map.Entry<InstanceRef, Stored> e : persistent.entrySet()) {
      Fact.newBuilder().setPersistent(persistentFact(e.getKey().service(), e.getKey().key(), e.getValue())).build()
          .writeDelimitedTo(body);
    }
    byte[] b = body.toByteArray();
    ByteBuffer file = ByteBuffer.allocate(STATE_MAGIC.length + 16 + b.length).put(STATE_MAGIC).putInt(FORMAT)
        .putInt(crc(b, 0, b.length)).putLong(b.length).put(b);
    Path tmp = stateFile.resolveSibling("state.tmp");
    Files.write(tmp, file.array());
    Durably.force(tmp);
    Durably.move(tmp, stateFile);
    // The facts just written are in the state file now; replaying them again would change nothing.
    // The old journal stays open until the new one is in its place, so a failure here leaves it
    // as it was, still taking writes.
    Path fresh = journalFile.resolveSibling("journal.tmp");
    Files.write(fresh, journalHeader());
    Durably.force(fresh);
    Durably.move(fresh, journalFile);
    FileChannel old = journal;
    journal = FileChannel.open(journalFile, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
    journalFacts = 0;
    old.close();
  }

  private void apply(Fact f) {
    if (f.hasSettings()) {
      SettingsState s = f.getSettings();
      ServiceKey service = LogCodec.service(s.getService());
      ServiceSettings value = LogCodec.settings(s);
      if (value.equals(ServiceSettings.DEFAULT)) {
        settings.remove(service);
      } else {
        settings.put(service, value);
      }
    } else if (f.hasPersistent()) {
      PersistentInstance p = f.getPersistent();
      InstanceRef k = new InstanceRef(LogCodec.service(p.getService()), LogCodec.key(p.getKey()));
      if (p.hasInstance()) {
        persistent.put(k, new Stored(LogCodec.instance(p.getInstance()), p.getIdentity()));
      } else {
        persistent.remove(k);
      }
    } else if (f.hasHold()) {
      InstanceRef k = new InstanceRef(LogCodec.service(f.getHold().getService()), LogCodec.key(f.getHold().getKey()));
      if (f.getHold().getHeld()) {
        holds.add(k);
      } else {
        holds.remove(k);
      }
    }
  }

  // --- Reading ---

  /** Reads the state file; returns its format. */
  private int readState() throws IOException {
    byte[] all = Files.readAllBytes(stateFile);
    int head = STATE_MAGIC.length + 16;
    if (all.length < head || !java.util.Arrays.equals(all, 0, STATE_MAGIC.length, STATE_MAGIC, 0, STATE_MAGIC.length)) {
      throw damaged(stateFile, "it is not a Roster state file (" + all.length + " bytes, no RSTRSTAT header)");
    }
    ByteBuffer b = ByteBuffer.wrap(all, STATE_MAGIC.length, 16);
    int format = b.getInt();
    int crc = b.getInt();
    long length = b.getLong();
    checkFormat(stateFile, format);
    if (length != all.length - head) {
      throw damaged(stateFile, "its header says " + length + " bytes of state and " + (all.length - head) + " follow");
    }
    if (crc(all, head, all.length - head) != crc) {
      throw damaged(stateFile, "its checksum does not match its content");
    }
    try (InputStream in = new ByteArrayInputStream(all, head, all.length - head)) {
      StoreHeader header = StoreHeader.parseDelimitedFrom(in);
      if (header == null) {
        throw damaged(stateFile, "it has no header message");
      }
      checkFormat(stateFile, header.getFormat());
      for (int i = 0; i < header.getFacts(); i++) {
        Fact f = Fact.parseDelimitedFrom(in);
        if (f == null) {
          throw damaged(stateFile, "it ends after " + i + " of " + header.getFacts() + " facts");
        }
        apply(f);
      }
    } catch (InvalidProtocolBufferException | RuntimeException e) {
      throw damaged(stateFile, "its content does not parse (" + e.getMessage() + ")");
    }
    return format;
  }

  /** Replays the journal (cutting off a torn last record) and opens it for appending. */
  private FileChannel openJournal() throws IOException {
    if (!Files.exists(journalFile) || Files.size(journalFile) == 0) {
      // None yet, or created and not yet written when a crash came: an empty journal.
      Path fresh = journalFile.resolveSibling("journal.tmp");
      Files.write(fresh, journalHeader());
      Durably.force(fresh);
      Durably.move(fresh, journalFile);
      return FileChannel.open(journalFile, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
    }
    byte[] all = Files.readAllBytes(journalFile);
    if (all.length < JOURNAL_HEADER
        || !java.util.Arrays.equals(all, 0, JOURNAL_MAGIC.length, JOURNAL_MAGIC, 0, JOURNAL_MAGIC.length)) {
      throw damaged(journalFile, "it is not a Roster journal (" + all.length + " bytes, no RSTRJRNL header)");
    }
    journalFormat = ByteBuffer.wrap(all, JOURNAL_MAGIC.length, 4).getInt();
    checkFormat(journalFile, journalFormat);
    int at = JOURNAL_HEADER;
    int records = 0;
    while (at < all.length) {
      ByteBuffer b = ByteBuffer.wrap(all, at, all.length - at);
      if (b.remaining() < 8) {
        break; // torn: the length and checksum were cut short
      }
      int length = b.getInt();
      int crc = b.getInt();
      if (length < 0 || length > MAX_RECORD) {
        throw damaged(journalFile, "record " + (records + 1) + " at byte " + at + " claims " + length + " bytes");
      }
      if (b.remaining() < length) {
        break; // torn: the record was cut short
      }
      if (crc(all, at + 8, length) != crc) {
        if (at + 8 + length == all.length) {
          break; // torn: the last record's bytes never all reached the disk
        }
        throw damaged(journalFile, "record " + (records + 1) + " at byte " + at + " fails its checksum, and "
            + (all.length - at - 8 - length) + " bytes follow it");
      }
      try {
        apply(Fact.parseFrom(ByteBuffer.wrap(all, at + 8, length)));
      } catch (InvalidProtocolBufferException e) {
        throw damaged(journalFile, "record " + (records + 1) + " at byte " + at + " does not parse: " + e.getMessage());
      }
      at += 8 + length;
      records++;
    }
    FileChannel c = FileChannel.open(journalFile, StandardOpenOption.WRITE);
    if (at < all.length) {
      log.warn("{}: dropped the last {} bytes after record {}, a write cut short by a crash before it was "
          + "acknowledged", journalFile, all.length - at, records);
      c.truncate(at);
      c.force(true);
    }
    c.position(at);
    journalFacts = records;
    return c;
  }

  private static byte[] journalHeader() {
    return ByteBuffer.allocate(JOURNAL_HEADER).put(JOURNAL_MAGIC).putInt(FORMAT).array();
  }

  private static void checkFormat(Path file, int format) throws DataDir.Refused {
    if (format > FORMAT || format < 1) {
      throw new DataDir.Refused(file + " is in format " + format + ", and this Roster reads formats up to " + FORMAT
          + ": start a Roster at least as new as the one that wrote it; nothing was changed");
    }
  }

  private static DataDir.Refused damaged(Path file, String why) {
    return new DataDir.Refused(file + " is damaged: " + why + ". Roster does not start on state it cannot read. "
        + "Restore the data directory from a backup (docs/persistence.md), or move this file away to start without "
        + "what it holds (service settings, operator holds and persistent instances)");
  }

  private static int crc(byte[] b, int off, int len) {
    CRC32C c = new CRC32C();
    c.update(b, off, len);
    return (int) c.getValue();
  }

  @Override
  public String toString() {
    return stateFile.getParent().toString();
  }

  @Override
  public synchronized void close() throws IOException {
    journal.close();
  }
}
