package io.roster.server.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.roster.server.testing.AuthFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The auth file is replaced in one step or not at all (decision 98). */
class AuthFileWriterTest {

  @TempDir Path dir;

  @Test
  void aWriteReplacesTheFileAndLeavesNoTemporaryFile() throws IOException {
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json"));
    ObjectNode root = AuthFile.tree(auth.path());
    root.withArray("tokens").addObject().put("name", "ci").put("sha256", Passwords.sha256("rst_x"))
        .set("grants", AuthFile.grantsJson(List.of(new Grant(Permission.READ, "prod", Grant.ALL))));

    AuthFileWriter.write(auth.path(), root, AuthFileWriter.ATOMIC);

    assertThat(AuthFile.read(auth.path()).token("ci")).isNotNull();
    assertThat(Files.readString(auth.path())).isEqualTo(AuthFile.pretty(root));
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files).containsExactly(auth.path());
    }
  }

  @Test
  void aFailingRenameLeavesTheOldFileAsItWasAndNoTemporaryFile() throws IOException {
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json"));
    byte[] before = Files.readAllBytes(auth.path());
    ObjectNode root = AuthFile.tree(auth.path());
    root.withArray("tokens").addObject().put("name", "ci").put("sha256", Passwords.sha256("rst_x"))
        .set("grants", AuthFile.grantsJson(List.of()));

    assertThatThrownBy(() -> AuthFileWriter.write(auth.path(), root, (from, to) -> {
      throw new IOException("rename failed");
    })).isInstanceOf(IOException.class).hasMessage("rename failed");

    assertThat(Files.readAllBytes(auth.path())).isEqualTo(before);
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files).containsExactly(auth.path());
    }
  }

  @Test
  void contentTheServerWouldRefuseIsNeverWritten() throws IOException {
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json"));
    byte[] before = Files.readAllBytes(auth.path());
    ObjectNode root = AuthFile.tree(auth.path());
    root.withArray("tokens").addObject().put("name", "bad name").put("sha256", Passwords.sha256("rst_x"));

    assertThatThrownBy(() -> AuthFileWriter.write(auth.path(), root, AuthFileWriter.ATOMIC))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tokens[0].name: bad name");
    assertThat(Files.readAllBytes(auth.path())).isEqualTo(before);
  }
}
