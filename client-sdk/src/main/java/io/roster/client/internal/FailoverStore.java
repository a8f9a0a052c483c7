package io.roster.client.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The failover snapshot: the last known state of each subscribed service, one file per
 * service in a directory, read back when no server answers.
 *
 * <p>Files hold a state in the wire format's binary encoding ({@link ProtoMapper#writeSnapshot}),
 * are written to a temporary
 * file and moved into place, so a reader never sees half a file. Writes run on the given
 * executor, coalesced per service (only the latest pending state is written), so memory is
 * bounded by the number of subscribed services and callers never wait for the disk.
 */
final class FailoverStore {

  private static final Logger log = LoggerFactory.getLogger(FailoverStore.class);
  private static final String SUFFIX = ".roster";
  private static final int MAX_PLAIN_NAME = 200;

  private final Path dir;
  private final Executor writer;
  private final Map<ServiceKey, ServiceSnapshot> pending = new ConcurrentHashMap<>();
  private volatile boolean warned;

  FailoverStore(Path dir, Executor writer) {
    this.dir = dir;
    this.writer = writer;
  }

  /** Writes {@code snapshot} soon; a newer one offered meanwhile replaces it. */
  void save(ServiceSnapshot snapshot) {
    if (pending.put(snapshot.key(), snapshot) == null) {
      try {
        writer.execute(() -> flush(snapshot.key()));
      } catch (RuntimeException e) {
        pending.remove(snapshot.key()); // shutting down
      }
    }
  }

  /** The saved state of {@code key}, or null when there is none or it cannot be read. */
  @Nullable ServiceSnapshot load(ServiceKey key) {
    Path file = file(key);
    try (InputStream in = Files.newInputStream(file)) {
      ServiceSnapshot s = ProtoMapper.readSnapshot(in);
      return s.key().equals(key) ? s : null;
    } catch (NoSuchFileException e) {
      return null;
    } catch (IOException | RuntimeException e) {
      log.warn("Ignoring unreadable failover file {}: {}", file, e.toString());
      return null;
    }
  }

  private void flush(ServiceKey key) {
    ServiceSnapshot s = pending.remove(key);
    if (s == null) {
      return;
    }
    Path file = file(key);
    try {
      Files.createDirectories(dir);
      Path tmp = Files.createTempFile(dir, ".write-", ".tmp");
      try {
        try (OutputStream out = Files.newOutputStream(tmp)) {
          ProtoMapper.writeSnapshot(s, out);
        }
        move(tmp, file);
      } finally {
        Files.deleteIfExists(tmp);
      }
      warned = false;
    } catch (IOException | RuntimeException e) {
      if (!warned) {
        warned = true;
        log.warn("Cannot write the failover snapshot {}: {} (further failures are logged at debug)", file, e.toString());
      } else {
        log.debug("Cannot write the failover snapshot {}", file, e);
      }
    }
  }

  private static void move(Path from, Path to) throws IOException {
    try {
      Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  /**
   * The file of a service: its URL-encoded key when that is short enough for any file system,
   * else a SHA-256 of the key (names may be 512 characters; most file systems allow 255 bytes).
   * The file holds the key too, and {@link #load} checks it.
   */
  private Path file(ServiceKey key) {
    String name = String.join("@@", key.namespace(), key.group(), key.name());
    String encoded = URLEncoder.encode(name, StandardCharsets.UTF_8);
    if (encoded.length() > MAX_PLAIN_NAME) {
      try {
        byte[] digest = MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
        encoded = "sha256-" + HexFormat.of().formatHex(digest);
      } catch (NoSuchAlgorithmException e) {
        throw new AssertionError("SHA-256 is required of every JVM", e);
      }
    }
    return dir.resolve(encoded + SUFFIX);
  }

}
