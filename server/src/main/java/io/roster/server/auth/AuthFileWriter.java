package io.roster.server.auth;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Writes the auth file so that a reader, or a crash, finds the old content or the new one, never
 * part of either (decision 98): the new content goes to a temporary file in the same directory,
 * owner-only where the file system allows, which is forced to the disk, renamed over the file in
 * one step, and the directory forced. When a step fails the temporary file is deleted and the old
 * file is left as it was. Stateless; callers serialise their writes of one file.
 */
final class AuthFileWriter {

  /** The rename step; tests give one that fails. */
  @FunctionalInterface
  interface Rename {
    void move(Path from, Path to) throws IOException;
  }

  static final Rename ATOMIC = (from, to) ->
      Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);

  private AuthFileWriter() {}

  /** Checks {@code root} as the server reads it, then writes it as {@code file} (see the class comment). */
  static void write(Path file, JsonNode root, Rename rename) throws IOException {
    AuthFile.parse(root, file.toString()); // never write a file the server would refuse
    byte[] bytes = AuthFile.pretty(root).getBytes(StandardCharsets.UTF_8);
    Path dir = file.toAbsolutePath().getParent();
    Path tmp = Files.createTempFile(dir, ".auth", ".tmp");
    try {
      restrict(tmp);
      try (FileChannel c = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) {
          c.write(b);
        }
        c.force(true);
      }
      rename.move(tmp, file.toAbsolutePath());
    } finally {
      Files.deleteIfExists(tmp);
    }
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException e) {
      // Some file systems cannot force a directory; the rename itself is still atomic.
    }
  }

  private static void restrict(Path p) throws IOException {
    try {
      Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-------"));
    } catch (UnsupportedOperationException e) {
      // not a POSIX file system: its defaults apply
    }
  }
}
