package io.roster.server.store;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/** File steps that survive a crash of the process or of the machine once they return. */
final class Durably {

  private Durably() {}

  /** Forces {@code file}'s content to the disk. */
  static void force(Path file) throws IOException {
    try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE)) {
      c.force(true);
    }
  }

  /**
   * Renames {@code from} over {@code to} in one step, then forces the directory, so that after a
   * crash the name points at the old file or the new one, never at neither.
   */
  static void move(Path from, Path to) throws IOException {
    Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    try (FileChannel d = FileChannel.open(to.getParent(), StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException e) {
      // Some file systems cannot force a directory; the rename itself is still atomic.
    }
  }
}
