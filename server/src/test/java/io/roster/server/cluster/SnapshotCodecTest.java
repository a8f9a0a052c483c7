package io.roster.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.model.Instance;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Change;
import io.roster.server.registry.Registry;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SnapshotCodecTest {

  private static final ServiceKey A = ServiceKey.of("public", "DEFAULT_GROUP", "a");
  private static final ServiceKey B = ServiceKey.of("public", "DEFAULT_GROUP", "b");
  private static final Owner ONE = Owner.session("m1:9849@x", "c-1");
  private static final Owner TWO = Owner.session("m2:9849@y", "c-2");

  private static Instance instance(int port, Map<String, String> metadata) {
    return new Instance("10.0.0.1", port, 2.5, true, port % 2 == 0, true, "DEFAULT", metadata, "");
  }

  @Test
  void aRegistryWrittenAndReadBackIsTheSameRegistry() throws Exception {
    AtomicLong clock = new AtomicLong(1_000);
    Registry source = new Registry(clock::incrementAndGet);
    source.register(ONE, A, instance(1, Map.of("zone", "a")));
    source.register(TWO, A, instance(2, Map.of()));
    source.register(TWO, B, instance(3, Map.of("k", "v")));
    source.updateSettings(A, s -> s.withProtectThreshold(0.5).withMetadata(Map.of("team", "x")));
    source.setEnabled(A, instance(2, Map.of()).key(), false); // an operator's hold travels too
    List<RegistryStateMachine.Member> members = List.of(
        new RegistryStateMachine.Member("m1:9849", "x", "h1:9848", false, 7),
        new RegistryStateMachine.Member("m2:9849", "y", "h2:9848", true, 0));

    ByteArrayOutputStream out = new ByteArrayOutputStream();
    SnapshotCodec.write(out, source.image(), members, List.of("m2:9849"), Map.of("m1:9849@x", 41L));
    SnapshotCodec.Loaded loaded = SnapshotCodec.read(new ByteArrayInputStream(out.toByteArray()), "a snapshot");

    assertThat(loaded.image()).isEqualTo(source.image());
    assertThat(loaded.members()).isEqualTo(members);
    assertThat(loaded.stale()).containsExactly("m2:9849");
    assertThat(loaded.lastSequences()).containsExactly(Map.entry("m1:9849@x", 41L)); // a second copy stays a copy

    // Restored into a registry that held something else: same states, same revisions, owners counted.
    Registry target = new Registry(() -> 0);
    target.register(ONE, B, instance(9, Map.of()));
    List<Change> changes = new ArrayList<>();
    target.addListener(changes::add);
    target.restore(loaded.image());
    assertThat(target.snapshot(A)).isEqualTo(source.snapshot(A));
    assertThat(target.snapshot(B)).isEqualTo(source.snapshot(B));
    assertThat(target.settings(A)).isEqualTo(source.settings(A));
    assertThat(target.ownedCount(ONE)).isEqualTo(1);
    assertThat(target.ownedCount(TWO)).isEqualTo(2);
    assertThat(target.servicesOf(ONE)).containsExactly(A);
    assertThat(changes).extracting(Change::service).containsExactlyInAnyOrder(A, B);
  }
}
