package io.roster.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.server.testing.Tmpfs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The data directory's layout file, its lock, and what it refuses. */
class DataDirTest {

  @TempDir Path dir;

  @Test
  void aNewDirectoryGetsTheLayoutFile() throws IOException {
    Path data = dir.resolve("data");
    try (DataDir d = DataDir.open(data)) {
      assertThat(Files.readString(data.resolve(DataDir.LAYOUT_FILE))).isEqualTo("roster data directory, layout 1\n");
      assertThat(d.standalone()).isEqualTo(data.toAbsolutePath().resolve("standalone"));
    }
    try (DataDir d = DataDir.open(data)) {
      assertThat(d.path()).isEqualTo(data.toAbsolutePath());
    }
  }

  @Test
  void aReadOnlyDirectoryRefusesNamingThePathAndTheWaysOn() throws Exception {
    Path data = dir.resolve("data");
    try (Tmpfs ro = Tmpfs.mount(data, "ro,size=1m")) {
      assertThatThrownBy(() -> DataDir.open(data)).isInstanceOf(DataDir.Refused.class)
          .hasMessageContaining("cannot write " + data.toAbsolutePath().resolve(".lock"))
          .hasMessageContaining("Read-only file system")
          .hasMessageContaining("point --data-dir at a directory it can write")
          .hasMessageContaining("--data-dir \"\" to keep nothing on disk");
    }
  }

  @Test
  void aMembersDirectoryWithoutTheLayoutFileIsAdopted() throws IOException {
    Files.createDirectories(dir.resolve("raft/127.0.0.1_9849"));
    try (DataDir d = DataDir.open(dir)) {
      assertThat(dir.resolve(DataDir.LAYOUT_FILE)).exists();
      assertThat(dir.resolve("raft/127.0.0.1_9849")).isDirectory();
    }
  }

  @Test
  void aDiskMountedAsTheDirectoryMayHaveItsLostAndFound() throws IOException {
    Files.createDirectories(dir.resolve("lost+found"));
    try (DataDir d = DataDir.open(dir)) {
      assertThat(dir.resolve(DataDir.LAYOUT_FILE)).exists();
    }
  }

  @Test
  void aDirectoryOfSomethingElseIsRefused() throws IOException {
    Files.writeString(dir.resolve("notes.txt"), "mine");
    assertThatThrownBy(() -> DataDir.open(dir)).isInstanceOf(DataDir.Refused.class)
        .hasMessageContaining("holds [notes.txt], which Roster did not write");
    assertThat(dir.resolve(DataDir.LAYOUT_FILE)).doesNotExist();
  }

  @Test
  void aNewerOrDamagedLayoutIsRefused() throws IOException {
    Files.writeString(dir.resolve(DataDir.LAYOUT_FILE), "roster data directory, layout 7\n");
    assertThatThrownBy(() -> DataDir.open(dir)).isInstanceOf(DataDir.Refused.class)
        .hasMessageContaining("says layout 7, and this Roster reads layout 1");
    Files.writeString(dir.resolve(DataDir.LAYOUT_FILE), "\0\0\0");
    assertThatThrownBy(() -> DataDir.open(dir)).isInstanceOf(DataDir.Refused.class)
        .hasMessageContaining(DataDir.LAYOUT_FILE + " is damaged");
  }

  @Test
  void aSecondProcessIsKeptOut() throws Exception {
    try (DataDir d = DataDir.open(dir)) {
      // Another JVM: a lock held within this one would be refused differently.
      Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
          System.getProperty("java.class.path"), LockProbe.class.getName(), dir.toString()).redirectErrorStream(true)
          .start();
      String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      assertThat(p.waitFor()).as(out).isEqualTo(3);
      assertThat(out).contains("is in use by another Roster process");
    }
  }

  /** Opens the directory in a JVM of its own: exit 3 and the message when refused. */
  public static final class LockProbe {
    public static void main(String[] args) throws IOException {
      try (DataDir d = DataDir.open(Path.of(args[0]))) {
        System.exit(0);
      } catch (DataDir.Refused e) {
        System.out.println(e.getMessage());
        System.exit(3);
      }
    }
  }
}
