package io.roster.server.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A small tmpfs mounted on a directory for a test of a real full or read-only disk ({@code mount
 * -t tmpfs -o OPTIONS tmpfs DIR}): it needs root (CI runs as root). Where mounting is refused, the
 * test is skipped (an aborted assumption) with the reason {@code mount} gave. Closing unmounts it.
 */
public final class Tmpfs implements AutoCloseable {

  private final Path dir;

  private Tmpfs(Path dir) {
    this.dir = dir;
  }

  /** Mounts a tmpfs with {@code options} (e.g. {@code size=2m}, {@code ro}) on {@code dir}, created if needed. */
  public static Tmpfs mount(Path dir, String options) throws IOException, InterruptedException {
    Files.createDirectories(dir);
    String refused = run(List.of("mount", "-t", "tmpfs", "-o", options, "tmpfs", dir.toString()));
    Assumptions.assumeTrue(refused == null, () -> "skipped: this test needs a tmpfs of its own, and `mount -t tmpfs -o "
        + options + " tmpfs " + dir + "` was refused (" + refused + "); it runs as root, as CI does");
    return new Tmpfs(dir);
  }

  /** Runs {@code command}; null when it succeeded, else what it said. */
  private static String run(List<String> command) throws IOException, InterruptedException {
    Process p;
    try {
      p = new ProcessBuilder(command).redirectErrorStream(true).start();
    } catch (IOException e) {
      return e.getMessage();
    }
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return "no answer within 30 s";
    }
    return p.exitValue() == 0 ? null : "exit " + p.exitValue() + ": " + output;
  }

  public Path dir() {
    return dir;
  }

  @Override
  public void close() throws IOException, InterruptedException {
    String failed = run(List.of("umount", "-l", dir.toString()));
    if (failed != null) {
      throw new IOException("umount " + dir + ": " + failed);
    }
  }
}
