package io.roster.server.store;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The server's {@code --data-dir}, opened for one process (docs/persistence.md): a versioned
 * layout named by the file {@value #LAYOUT_FILE}, a lock that keeps a second process out, and
 * where each kind of state lives in it.
 *
 * <pre>
 * DIR/roster-data        "roster data directory, layout 1": which layout this is
 * DIR/.lock              held while a server runs
 * DIR/raft/&lt;member&gt;/     a cluster member's Raft log and snapshots (Apache Ratis)
 * DIR/standalone/        a standalone server's state file and journal ({@link StateStore})
 * </pre>
 *
 * A directory without the layout file is adopted when it is empty or holds only what this
 * layout names (the directories of servers that wrote no layout file); one holding anything
 * else, or a layout this code does not know, makes {@link #open} throw a {@link Refused} that
 * names the file and what to do. Nothing is ever deleted to make room.
 */
public final class DataDir implements AutoCloseable {

  /** The file that names the layout. */
  public static final String LAYOUT_FILE = "roster-data";
  /** The layout this code writes and reads. */
  public static final int LAYOUT = 1;
  private static final Pattern LAYOUT_LINE = Pattern.compile("roster data directory, layout (\\d{1,9})\\s*");
  /** What the layout names, and a file system's own {@code lost+found} (a disk of its own mounted as DIR). */
  private static final Set<String> KNOWN = Set.of(LAYOUT_FILE, ".lock", "raft", "standalone", "lost+found");

  private final Path dir;
  private final FileChannel lockChannel;
  private final FileLock lock;

  private DataDir(Path dir, FileChannel lockChannel, FileLock lock) {
    this.dir = dir;
    this.lockChannel = lockChannel;
    this.lock = lock;
  }

  /** The data directory could not be used as it is; the message says why and what to do. */
  public static final class Refused extends IOException {
    public Refused(String message) {
      super(message);
    }
  }

  /**
   * Opens (creating it if needed) and locks {@code dir}.
   *
   * @throws Refused when another process holds it, its layout is unknown or damaged, or it holds
   *     files Roster did not write
   */
  public static DataDir open(Path dir) throws IOException {
    Path abs = dir.toAbsolutePath().normalize();
    FileChannel channel;
    try {
      Files.createDirectories(abs);
      channel = FileChannel.open(abs.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    } catch (FileSystemException e) {
      throw cannotWrite(abs, e);
    }
    FileLock lock;
    try {
      lock = channel.tryLock();
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
    if (lock == null) {
      channel.close();
      throw new Refused("--data-dir " + abs + " is in use by another Roster process (it holds " + abs.resolve(".lock")
          + "): give each server a data directory of its own");
    }
    try {
      checkLayout(abs);
      return new DataDir(abs, channel, lock);
    } catch (IOException | RuntimeException e) {
      lock.release();
      channel.close();
      throw e;
    }
  }

  /**
   * The server cannot write where {@code --data-dir} points (a read-only file system, a directory
   * of another user): which path, why, and the ways on.
   */
  static Refused cannotWrite(Path dir, FileSystemException e) {
    String path = e.getFile() == null ? dir.toString() : e.getFile();
    String why = e instanceof AccessDeniedException ? "permission denied"
        : e.getReason() == null ? e.getClass().getSimpleName() : e.getReason();
    return new Refused("--data-dir " + dir + ": cannot write " + path + " (" + why + "). The server writes its lock "
        + "file, the layout file and its durable state there, so it needs to write in that directory: run it as a "
        + "user who may write there (or mount the file system read-write), point --data-dir at a directory it can "
        + "write, or start with --data-dir \"\" to keep nothing on disk (a standalone server then forgets its "
        + "settings, holds and persistent instances at a restart); nothing was changed");
  }

  private static void checkLayout(Path dir) throws IOException {
    Path file = dir.resolve(LAYOUT_FILE);
    if (Files.exists(file)) {
      String text = Files.readString(file, StandardCharsets.UTF_8);
      Matcher m = LAYOUT_LINE.matcher(text);
      if (!m.matches()) {
        throw new Refused(file + " is damaged (it should read \"roster data directory, layout " + LAYOUT
            + "\"): Roster will not guess what the directory holds. Restore it from a backup, or write that line back "
            + "if the directory is otherwise intact");
      }
      int layout = Integer.parseInt(m.group(1));
      if (layout > LAYOUT || layout < 1) {
        throw new Refused(file + " says layout " + layout + ", and this Roster reads layout " + LAYOUT
            + ": start a Roster at least as new as the one that wrote it; nothing was changed");
      }
      return;
    }
    List<String> unknown = new ArrayList<>();
    try (Stream<Path> entries = Files.list(dir)) {
      entries.map(p -> p.getFileName().toString()).filter(n -> !KNOWN.contains(n)).sorted().forEach(unknown::add);
    }
    if (!unknown.isEmpty()) {
      throw new Refused("--data-dir " + dir + " holds " + unknown + ", which Roster did not write, and no " + LAYOUT_FILE
          + " file: point --data-dir at a directory of Roster's own (an empty or new one)");
    }
    Path tmp = dir.resolve(LAYOUT_FILE + ".tmp");
    try {
      Files.writeString(tmp, "roster data directory, layout " + LAYOUT + "\n", StandardCharsets.UTF_8);
      Durably.force(tmp);
      Durably.move(tmp, file);
    } catch (FileSystemException e) {
      throw cannotWrite(dir, e);
    }
  }

  /** The directory itself. */
  public Path path() {
    return dir;
  }

  /** Where a standalone server keeps its state (created on demand by its user). */
  public Path standalone() {
    return dir.resolve("standalone");
  }

  /** Where a cluster member's Raft storage lives in {@code dataDir}: {@code raft/<member>}, the id made safe for a file name. */
  public static Path raft(Path dataDir, String memberId) {
    return dataDir.resolve("raft").resolve(memberId.replaceAll("[^A-Za-z0-9._-]", "_"));
  }

  @Override
  public void close() throws IOException {
    try {
      lock.release();
    } finally {
      lockChannel.close();
    }
  }
}
