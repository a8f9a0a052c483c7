package io.roster.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.client.Instance;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FailoverStoreTest {

  @TempDir
  Path dir;

  @Test
  void savesAndLoadsBackEvenForNamesTooLongForAFileName() throws Exception {
    FailoverStore store = new FailoverStore(dir, Runnable::run);
    ServiceKey shortKey = new ServiceKey("public", "DEFAULT_GROUP", "orders");
    ServiceKey longKey = new ServiceKey("public", "DEFAULT_GROUP", "svc-" + "x".repeat(500));
    ServiceSnapshot a = new ServiceSnapshot(shortKey, List.of(Instance.of("10.0.0.1", 80)), 7, "c7", false);
    ServiceSnapshot b = new ServiceSnapshot(longKey, List.of(Instance.of("10.0.0.2", 80)), 9, "c9", true);

    store.save(a);
    store.save(b);

    assertThat(store.load(shortKey)).isEqualTo(a);
    assertThat(store.load(longKey)).isEqualTo(b);
    assertThat(store.load(new ServiceKey("public", "DEFAULT_GROUP", "never"))).isNull();
    try (var files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .allMatch(n -> n.length() <= 255).hasSize(2);
    }
  }

  @Test
  void aCorruptFileIsIgnored() throws Exception {
    FailoverStore store = new FailoverStore(dir, Runnable::run);
    ServiceKey key = new ServiceKey("public", "DEFAULT_GROUP", "orders");
    store.save(new ServiceSnapshot(key, List.of(Instance.of("10.0.0.1", 80)), 7, "c7", false));
    try (var files = Files.list(dir)) {
      Files.write(files.findFirst().orElseThrow(), new byte[] {(byte) 0xff, 0x01, 0x02});
    }

    assertThat(store.load(key)).isNull();
  }
}
