package io.roster.server.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ValidationTest {

  private static Instance instance(String ip, int port, double weight, String cluster, Map<String, String> md) {
    return new Instance(ip, port, weight, true, true, true, cluster, md, "");
  }

  @Test
  void serviceKeyFillsDefaults() {
    ServiceKey k = ServiceKey.of("", "", "orders");
    assertThat(k).isEqualTo(new ServiceKey("public", "DEFAULT_GROUP", "orders"));
    assertThat(k.groupedName()).isEqualTo("DEFAULT_GROUP@@orders");
  }

  @Test
  void serviceNameErrorsNameFieldValueAndLimit() {
    assertThatThrownBy(() -> ServiceKey.of("", "", ""))
        .isInstanceOf(RegistryException.class)
        .hasMessage("service.name: \"\" (expected: 1..512 characters of [A-Za-z0-9_.:/@-])");
    assertThatThrownBy(() -> ServiceKey.of("", "", "bad name"))
        .hasMessageStartingWith("service.name: \"bad name\"");
    assertThatThrownBy(() -> ServiceKey.of("", "", "a".repeat(513)))
        .hasMessageContaining("513 chars").hasMessageContaining("1..512");
    assertThatThrownBy(() -> ServiceKey.of("", "", "g@@s"))
        .hasMessage("service.name: \"g@@s\" (expected: no \"@@\" in a service name)");
    assertThatThrownBy(() -> ServiceKey.of("ns/x", "", "s"))
        .hasMessageStartingWith("service.namespace: \"ns/x\"");
    assertThat(((RegistryException) catchThrowable(() -> ServiceKey.of("", "g r", "s"))).field())
        .isEqualTo("service.group");
  }

  @Test
  void instanceErrorsNameFieldValueAndLimit() {
    assertThatThrownBy(() -> instance("10.0.0.1", 8080, 20000.0, "", Map.of()))
        .hasMessage("instance.weight: 20000.0 (expected: 0..10000)");
    assertThatThrownBy(() -> instance("10.0.0.1", 8080, Double.NaN, "", Map.of()))
        .hasMessage("instance.weight: NaN (expected: 0..10000)");
    assertThatThrownBy(() -> instance("10.0.0.1", 0, 1, "", Map.of()))
        .hasMessage("instance.port: 0 (expected: 1..65535)");
    assertThatThrownBy(() -> instance("", 80, 1, "", Map.of()))
        .hasMessageStartingWith("instance.ip: \"\"");
    assertThatThrownBy(() -> instance("10.0.0.1 ", 80, 1, "", Map.of()))
        .hasMessageStartingWith("instance.ip: \"10.0.0.1 \"");
    assertThatThrownBy(() -> instance("10.0.0.1", 80, 1, "no spaces", Map.of()))
        .hasMessageStartingWith("instance.cluster: \"no spaces\"");
  }

  @Test
  void metadataIsBounded() {
    Map<String, String> many = new HashMap<>();
    for (int i = 0; i < 65; i++) {
      many.put("k" + i, "v");
    }
    assertThatThrownBy(() -> instance("h", 80, 1, "", many))
        .hasMessage("instance.metadata: 65 entries (expected: at most 64 entries)");
    assertThatThrownBy(() -> instance("h", 80, 1, "", Map.of("k", "x".repeat(1025))))
        .hasMessage("instance.metadata[k]: 1025 characters (expected: at most 1024 characters)");
    Map<String, String> big = new HashMap<>();
    for (int i = 0; i < 20; i++) {
      big.put("k" + i, "x".repeat(1000));
    }
    assertThatThrownBy(() -> instance("h", 80, 1, "", big))
        .hasMessage("instance.metadata: 20050 bytes of keys and values (UTF-8) (expected: at most 16384 bytes (16 KiB) in total)");
    // Bytes, not characters: 16 entries of 512 two-byte characters are 16 KiB of text.
    Map<String, String> wide = new HashMap<>();
    for (int i = 0; i < 16; i++) {
      wide.put("k" + i, "\u00e9".repeat(520));
    }
    assertThatThrownBy(() -> instance("h", 80, 1, "", wide)).hasMessageContaining("bytes of keys and values");
  }

  @Test
  void instanceDefaultsAndId() {
    Instance i = instance("10.0.0.1", 8080, 1, "", Map.of()).withId(ServiceKey.of("", "", "orders"));
    assertThat(i.cluster()).isEqualTo("DEFAULT");
    assertThat(i.instanceId()).isEqualTo("10.0.0.1#8080#DEFAULT#DEFAULT_GROUP@@orders");
  }

  @Test
  void checksumDependsOnContentNotOrderOrRevision() {
    ServiceKey k = ServiceKey.of("", "", "s");
    Instance a = instance("10.0.0.1", 1, 1, "", Map.of("a", "1", "b", "2"));
    Instance b = instance("10.0.0.2", 1, 1, "", Map.of());
    ServiceSnapshot s1 = ServiceSnapshot.of(k, java.util.List.of(a, b), 1);
    ServiceSnapshot s2 = ServiceSnapshot.of(k, java.util.List.of(b, a), 99);
    assertThat(s1.checksum()).isEqualTo(s2.checksum());
    assertThat(s1.instances()).containsExactly(a, b);
    ServiceSnapshot s3 = ServiceSnapshot.of(k, java.util.List.of(a, b.withId(k)), 1);
    assertThat(s3.checksum()).isEqualTo(s1.checksum());
    ServiceSnapshot s4 = ServiceSnapshot.of(k, java.util.List.of(a, instance("10.0.0.2", 1, 2, "", Map.of())), 1);
    assertThat(s4.checksum()).isNotEqualTo(s1.checksum());
  }

  @Test
  void disabledInstancesAreNotVisibleAndViewsFilter() {
    ServiceKey k = ServiceKey.of("", "", "s");
    Instance on = instance("10.0.0.1", 1, 1, "a", Map.of());
    Instance off = new Instance("10.0.0.2", 1, 1, true, false, true, "a", Map.of(), "");
    Instance sick = new Instance("10.0.0.3", 1, 1, false, true, true, "b", Map.of(), "");
    ServiceSnapshot s = ServiceSnapshot.of(k, java.util.List.of(on, off, sick), 5);
    assertThat(s.instances()).containsExactly(on, sick);
    assertThat(s.view(java.util.Set.of("a"), false).instances()).containsExactly(on);
    assertThat(s.view(java.util.Set.of(), true).instances()).containsExactly(on);
    assertThat(s.view(java.util.Set.of(), false)).isSameAs(s);
  }

  private static Throwable catchThrowable(Runnable r) {
    try {
      r.run();
      return null;
    } catch (Throwable t) {
      return t;
    }
  }
}
