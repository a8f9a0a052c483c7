package io.roster.server.cluster;

import com.google.protobuf.InvalidProtocolBufferException;
import io.roster.proto.cluster.v1.Batch;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.registry.Command;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.MD5FileUtil;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies committed log entries to this member's registry, in log order, on Ratis's one apply
 * thread. Each entry is a {@link Batch}: the registry's clock reads the batch's time while its
 * commands are applied, so every member computes the same revisions from the same entries.
 *
 * <p>Besides the registry it keeps the membership facts the log decided: each member's current
 * incarnation and client address, and which members have owners of a past incarnation (or of a
 * member that is down) waiting to be ended. These are the same on every member too.
 *
 * <p>Results go back to this member's waiting requests through {@link Applied}; commands that
 * the registry refuses are refused the same way everywhere, so a refusal changes nothing on any
 * member.
 */
final class RegistryStateMachine extends BaseStateMachine {

  private static final Logger log = LoggerFactory.getLogger(RegistryStateMachine.class);

  /** Told of each applied batch (this member's batches complete their requests there). */
  interface Applied {
    /**
     * A batch was applied: {@code results} holds, per command, its result or the
     * RuntimeException that refused it.
     */
    void onApplied(Batch batch, List<Object> results, long index);
  }

  /** A member as the log knows it. */
  record Member(String id, String incarnation, String clientAddress, boolean down, int sessions) {
    Member withDown(boolean value) {
      return new Member(id, incarnation, clientAddress, value, value ? 0 : sessions);
    }
  }

  /** Named in full: {@code StateMachine.Registry} is another type of that name. */
  private final io.roster.server.registry.Registry registry;
  private final EntryClock clock;
  private final Applied applied;
  /** Guarded by this; written on the apply thread only. */
  private final Map<String, Member> members = new TreeMap<>();
  /** Members with owners of a past incarnation (or all their owners, when down) still in the registry. */
  private final Map<String, Long> staleSinceIndex = new TreeMap<>();
  /**
   * By {@code member@incarnation} (the current incarnation of each member), the sequence of its
   * last batch applied (guarded by this; written on the apply thread only): a batch at or below it
   * is a second copy, dropped.
   */
  private final Map<String, Long> lastSequence = new TreeMap<>();

  private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
  /**
   * The newest snapshot on disk, or null: read at start and after an installed snapshot, set by
   * {@link #takeSnapshot}. Ratis asks for it on every round of every log appender; the storage
   * it would otherwise ask lists the snapshot directory on each call while there is none.
   */
  private volatile @Nullable SingleFileSnapshotInfo latestSnapshot;
  /** Leader changes this member has been told of since start. */
  private final java.util.concurrent.atomic.LongAdder leaderChanges = new java.util.concurrent.atomic.LongAdder();
  /** Entries and commands applied since start (written on the apply thread only). */
  private volatile long entriesApplied;
  private volatile long commandsApplied;

  RegistryStateMachine(io.roster.server.registry.Registry registry, EntryClock clock, Applied applied) {
    this.registry = registry;
    this.clock = clock;
    this.applied = applied;
  }

  @Override
  public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
    super.initialize(server, groupId, raftStorage);
    storage.init(raftStorage);
    getLifeCycle().startAndTransition(() -> load(storage.loadLatestSnapshot()), IOException.class);
  }

  /** Ratis pauses the state machine before it installs a snapshot from the leader. */
  @Override
  public void pause() {
    getLifeCycle().transition(LifeCycle.State.PAUSING);
    getLifeCycle().transition(LifeCycle.State.PAUSED);
  }

  /** A snapshot was installed from the leader: this member lagged further behind than the log reaches. */
  @Override
  public void reinitialize() throws IOException {
    getLifeCycle().startAndTransition(() -> load(storage.loadLatestSnapshot()), IOException.class);
  }

  @Override
  public @Nullable SnapshotInfo getLatestSnapshot() {
    return latestSnapshot;
  }

  @Override
  public void notifyLeaderChanged(org.apache.ratis.protocol.RaftGroupMemberId groupMemberId,
      org.apache.ratis.protocol.RaftPeerId newLeaderId) {
    leaderChanges.increment();
  }

  /** Told when the group shuts this member's Raft server down (see {@link #notifyServerShutdown}). */
  private volatile Runnable shutDownByGroup = () -> { };

  /** {@code then} runs when the group shuts this member's Raft server down. */
  void onShutDownByGroup(Runnable then) {
    this.shutDownByGroup = then;
  }

  /**
   * Ratis closed this member's Raft server: for the whole server ({@code allServer}, this member
   * stopping), or because the group told it to shut down (it asked for votes, and the leader's
   * configuration does not list it).
   */
  @Override
  public void notifyServerShutdown(org.apache.ratis.proto.RaftProtos.RoleInfoProto roleInfo, boolean allServer) {
    if (!allServer) {
      shutDownByGroup.run();
    }
  }

  /** Leader changes this member has been told of since start. */
  long leaderChanges() {
    return leaderChanges.sum();
  }

  /** The newest snapshot's file, or null when there is none. */
  java.nio.file.@Nullable Path latestSnapshotFile() {
    SingleFileSnapshotInfo s = latestSnapshot;
    return s == null ? null : s.getFile().getPath();
  }

  @Override
  public StateMachineStorage getStateMachineStorage() {
    return storage;
  }

  /**
   * Writes the registry and the membership facts at the last applied entry to a snapshot file
   * (on Ratis's apply thread, so nothing changes meanwhile); the log before it can then go.
   */
  @Override
  public long takeSnapshot() throws IOException {
    TermIndex last = getLastAppliedTermIndex();
    if (last == null || last.getIndex() < 0) {
      return RaftLog.INVALID_LOG_INDEX;
    }
    File file = storage.getSnapshotFile(last.getTerm(), last.getIndex());
    io.roster.server.registry.Registry.Image image = registry.image();
    List<Member> known;
    List<String> stale;
    Map<String, Long> sequences;
    synchronized (this) {
      known = List.copyOf(members.values());
      stale = List.copyOf(staleSinceIndex.keySet());
      sequences = Map.copyOf(lastSequence);
    }
    try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file.toPath()), 1 << 16)) {
      SnapshotCodec.write(out, image, known, stale, sequences);
    }
    MD5Hash md5 = MD5FileUtil.computeAndSaveMd5ForFile(file);
    latestSnapshot = storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(file.toPath(), md5), last));
    log.info("Snapshot at log index {}: {} services, {} members ({} KiB)", last.getIndex(), image.services().size(),
        known.size(), file.length() / 1024);
    return last.getIndex();
  }

  private void load(SingleFileSnapshotInfo snapshot) throws IOException {
    latestSnapshot = snapshot;
    if (snapshot == null) {
      return;
    }
    File file = snapshot.getFile().getPath().toFile();
    SnapshotCodec.Loaded loaded;
    try (InputStream in = new BufferedInputStream(Files.newInputStream(file.toPath()), 1 << 16)) {
      loaded = SnapshotCodec.read(in, "the snapshot " + file);
    }
    registry.restore(loaded.image());
    synchronized (this) {
      members.clear();
      loaded.members().forEach(m -> members.put(m.id(), m));
      staleSinceIndex.clear();
      loaded.stale().forEach(id -> staleSinceIndex.put(id, snapshot.getIndex()));
      lastSequence.clear();
      lastSequence.putAll(loaded.lastSequences());
    }
    setLastAppliedTermIndex(snapshot.getTermIndex());
    log.info("Loaded the snapshot at log index {}: {} services", snapshot.getIndex(), loaded.image().services().size());
  }

  @Override
  // The counters have one writer, the apply thread; volatile only lets other threads read them.
  @SuppressWarnings("NonAtomicVolatileUpdate")
  public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
    LogEntryProto entry = trx.getLogEntry();
    Batch batch;
    try {
      batch = Batch.parseFrom(entry.getStateMachineLogEntry().getLogData().asReadOnlyByteBuffer());
    } catch (InvalidProtocolBufferException e) {
      // Every member reads the same bytes: skipping it everywhere keeps them equal.
      log.error("Log entry {} is not a batch; skipped on every member", entry.getIndex(), e);
      updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
      return CompletableFuture.completedFuture(Message.EMPTY);
    }
    int format;
    try {
      format = LogCodec.checkFormat(batch.getFormat(), "log entry " + entry.getIndex() + " (the Raft log under --data-dir)");
    } catch (LogCodec.UnknownFormatException e) {
      // Never skipped: applying what follows would leave this member's registry unlike the
      // others'. The member stops at once (crash-only, as on running out of memory); its log and
      // snapshots stay as they are for a newer Roster to read.
      log.error("Cannot apply the log, stopping this member: {}", e.getMessage());
      System.err.println("roster: cannot apply the log, stopping this member: " + e.getMessage());
      Runtime.getRuntime().halt(2);
      return CompletableFuture.failedFuture(e);
    }
    List<Object> results = new ArrayList<>(batch.getCommandsCount());
    if (!firstCopy(batch)) {
      // A batch the log took twice (a retry of its proposal reached a new leader before the first
      // copy was applied there), or a late copy of one whose requests were already answered
      // failed: applied now it would undo what came after it. Dropped on every member alike.
      log.warn("Dropped log entry {}: member \"{}\"'s batch {} again (a later batch of it was applied already); "
          + "the log took it twice", entry.getIndex(), shown(batch.getOrigin()), batch.getSequence());
      RegistryException again = RegistryException.invalid("sequence", batch.getSequence(),
          "a batch of this member not applied yet");
      batch.getCommandsList().forEach(c -> results.add(again));
      updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
      entriesApplied++;
      applied.onApplied(batch, results, entry.getIndex());
      return CompletableFuture.completedFuture(Message.EMPTY);
    }
    clock.set(batch.getTimeMicros());
    int dropped = 0;
    for (io.roster.proto.cluster.v1.Command c : batch.getCommandsList()) {
      Object result;
      try {
        if (!admitted(batch, c)) {
          dropped++;
          throw RegistryException.invalid("origin", batch.getOrigin() + "@" + batch.getIncarnation(),
              "a member incarnation the log knows");
        }
        Command<?> command = LogCodec.decode(c, format);
        if (command != null) {
          admitOwner(command);
        }
        result = command != null ? command.applyTo(registry) : membership(c, entry.getIndex());
      } catch (RuntimeException refused) {
        result = refused;
      }
      results.add(result);
    }
    if (dropped > 0) {
      log.warn("Dropped {} of the {} commands of log entry {}: it claims to come from member \"{}\" incarnation "
          + "\"{}\", which the log does not know as a member's current incarnation (members: {}); only members "
          + "write to the log (docs/security.md, the peer port)", dropped, batch.getCommandsCount(), entry.getIndex(),
          shown(batch.getOrigin()), shown(batch.getIncarnation()), memberIncarnations());
    }
    updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
    entriesApplied++;
    commandsApplied += batch.getCommandsCount();
    applied.onApplied(batch, results, entry.getIndex());
    return CompletableFuture.completedFuture(Message.EMPTY);
  }

  /**
   * A configuration change (a member added or removed at runtime, {@link ClusterNode#changeMembers})
   * reached this member's log at {@code index}: members no longer in the group leave the member
   * list, and what their sessions registered is stale from here, ended after the grace as for a
   * member that went down. Called in log order on every member, so every member's list agrees.
   */
  @Override
  public void notifyConfigurationChanged(long term, long index,
      org.apache.ratis.proto.RaftProtos.RaftConfigurationProto conf) {
    java.util.Set<String> configured = new java.util.HashSet<>();
    conf.getPeersList().forEach(p -> configured.add(Peer.member(p.getId().toStringUtf8())));
    synchronized (this) {
      for (String id : List.copyOf(members.keySet())) {
        if (!configured.contains(id)) {
          members.remove(id);
          staleSinceIndex.put(id, index);
          log.info("Member {} left the group at log index {} (members now {}); what it registered is ended after "
              + "the grace", id, index, new java.util.TreeSet<>(configured));
        }
      }
    }
  }

  private @Nullable Object membership(io.roster.proto.cluster.v1.Command c, long index) {
    switch (c.getChangeCase()) {
      case MEMBER_STARTED -> {
        var m = c.getMemberStarted();
        synchronized (this) {
          Member before = members.get(m.getMember());
          members.put(m.getMember(), new Member(m.getMember(), m.getIncarnation(), m.getClientAddress(), false,
              before == null || !before.incarnation().equals(m.getIncarnation()) ? 0 : before.sessions()));
          if ((before != null && !before.incarnation().equals(m.getIncarnation())) || hasOwnersNotOf(m.getMember(),
              m.getIncarnation())) {
            staleSinceIndex.putIfAbsent(m.getMember(), index);
          } else {
            // Back with the same incarnation (it was recorded down, e.g. frozen, and was not):
            // nothing of it is stale any more, and a later "down" starts a grace of its own.
            staleSinceIndex.remove(m.getMember());
          }
        }
      }
      case MEMBER_DOWN -> {
        var m = c.getMemberDown();
        synchronized (this) {
          Member before = members.get(m.getMember());
          if (before != null && !before.down()) {
            members.put(m.getMember(), before.withDown(true));
            // Stale from this entry on, even if owners of a past incarnation kept it stale: the
            // leader's grace starts anew, so the owners of the incarnation that just went down
            // (its clients are moving now) get a full grace too (decision 54).
            staleSinceIndex.put(m.getMember(), index);
          }
        }
      }
      case MEMBER_LOAD -> {
        var l = c.getMemberLoad();
        synchronized (this) {
          Member before = members.get(l.getMember());
          if (before != null) {
            members.put(l.getMember(), new Member(before.id(), before.incarnation(), before.clientAddress(),
                before.down(), l.getSessions()));
          }
        }
      }
      case END_STALE_OWNERS -> {
        var e = c.getEndStaleOwners();
        String prefix = e.getMember() + "@";
        String keep = e.getKeepIncarnation();
        List<Owner> ended = registry.owners(o -> o.nodeId().startsWith(prefix)
            && (keep.isEmpty() || !o.nodeId().equals(prefix + keep)));
        for (Owner o : ended) {
          registry.removeOwner(o, false); // ended for want of news: not a departure seen here
        }
        synchronized (this) {
          staleSinceIndex.remove(e.getMember());
        }
        return ended;
      }
      default -> throw new IllegalArgumentException("not a membership command: " + c.getChangeCase());
    }
    return null;
  }

  /**
   * Refuses a registration whose owner names no member incarnation the log knows. Only a
   * member's sessions register, under {@code member@incarnation}, and only after that member's
   * {@code member_started} entry; an owner naming anything else was written by something that is
   * not a member (or by a member's past incarnation, whose owners are ending anyway), and nothing
   * would ever end it, since no member goes stale for it.
   */
  private void admitOwner(Command<?> command) {
    Owner owner = command instanceof Command.Register r ? r.owner()
        : command instanceof Command.ReplaceOwned r ? r.owner() : null;
    if (owner == null || owner.kind() == Owner.Kind.PERSISTENT) {
      return; // a persistent instance has no owner to end
    }
    String node = owner.nodeId();
    int at = node.lastIndexOf('@');
    Member m = at < 0 ? null : member(node.substring(0, at));
    if (m == null || !m.incarnation().equals(node.substring(at + 1))) {
      throw RegistryException.invalid("owner", node, "member@incarnation of a member the log knows");
    }
  }

  /**
   * Whether a command may be applied: only if its entry comes from the current incarnation of a
   * member the log knows, whatever the command (persistent instances, settings and membership
   * included). Only members write to the log, each under the incarnation its {@code
   * member_started} entry announced; that announcement is the one command admitted from an
   * incarnation not known yet, and only for itself (its member and incarnation are the entry's).
   * The same on every member: it depends on the log alone.
   */
  private boolean admitted(Batch batch, io.roster.proto.cluster.v1.Command c) {
    String origin = batch.getOrigin();
    String incarnation = batch.getIncarnation();
    if (c.hasMemberStarted() && !origin.isEmpty() && c.getMemberStarted().getMember().equals(origin)
        && c.getMemberStarted().getIncarnation().equals(incarnation)) {
      return true;
    }
    Member m = member(origin);
    return m != null && m.incarnation().equals(incarnation);
  }

  /**
   * Whether {@code batch} is the first copy of it, and of every later batch of its member's
   * incarnation, to be applied; notes it as the last applied. A member has one batch in flight at a
   * time and sends the next only once the last one was applied or failed, so its batches are
   * applied in the order of their sequences: one at or below the last applied is a second copy, or
   * the late copy of a batch whose requests were answered failed. A batch of another incarnation
   * starts the count afresh (a batch of an incarnation the log does not know is dropped anyway).
   */
  private synchronized boolean firstCopy(Batch batch) {
    Member m = members.get(batch.getOrigin());
    boolean announcing = batch.getCommandsList().stream().anyMatch(c -> c.hasMemberStarted()
        && c.getMemberStarted().getMember().equals(batch.getOrigin())
        && c.getMemberStarted().getIncarnation().equals(batch.getIncarnation()));
    if ((m == null || !m.incarnation().equals(batch.getIncarnation())) && !announcing) {
      return true; // not a member's: its commands are dropped one by one (admitted), nothing to count
    }
    String key = batch.getOrigin() + "@" + batch.getIncarnation();
    Long last = lastSequence.get(key);
    if (last != null && batch.getSequence() <= last) {
      return false;
    }
    lastSequence.keySet().removeIf(k -> k.startsWith(batch.getOrigin() + "@") && !k.equals(key));
    lastSequence.put(key, batch.getSequence());
    return true;
  }

  /** Text from a log entry made safe for a log line: no control characters, at most 64 characters. */
  private static String shown(String text) {
    String cut = text.length() > 64 ? text.substring(0, 64) + "…" : text;
    return cut.replaceAll("\\p{Cntrl}", "?");
  }

  /** {@code member@incarnation} of each member the log knows, for a log line. */
  private synchronized List<String> memberIncarnations() {
    return members.values().stream().map(m -> m.id() + "@" + m.incarnation()).toList();
  }

  private boolean hasOwnersNotOf(String member, String incarnation) {
    String prefix = member + "@";
    return !registry.owners(o -> o.nodeId().startsWith(prefix) && !o.nodeId().equals(prefix + incarnation)).isEmpty();
  }

  /** Log entries applied since this member started (each a batch of commands). */
  long entriesApplied() {
    return entriesApplied;
  }

  /** Commands applied since this member started, over all entries. */
  long commandsApplied() {
    return commandsApplied;
  }

  /** The members the log has heard of, by id. */
  synchronized List<Member> members() {
    return List.copyOf(members.values());
  }

  /** A member as the log knows it, or null. */
  synchronized @Nullable Member member(String id) {
    return members.get(id);
  }

  /** Members with owners waiting to be ended, and the log index from which they waited. */
  synchronized Map<String, Long> stale() {
    return Map.copyOf(staleSinceIndex);
  }
}
