package io.roster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

class InstanceTest {

  @Test
  void ofHasTheDocumentedDefaults() {
    Instance i = Instance.of("10.0.0.7", 8080);
    assertThat(i.weight()).isEqualTo(1.0);
    assertThat(i.healthy()).isTrue();
    assertThat(i.enabled()).isTrue();
    assertThat(i.ephemeral()).isTrue();
    assertThat(i.cluster()).isEqualTo("DEFAULT");
    assertThat(i.metadata()).isEmpty();
    assertThat(i.instanceId()).isEmpty();
    assertThat(Instance.builder().ip("10.0.0.7").port(8080).build()).isEqualTo(i);
  }

  @Test
  void messagesNameFieldValueAndLimit() {
    assertInvalid(() -> Instance.of("10.0.0.7", 8080).withWeight(20000),
        "weight", "weight: 20000.0 (expected: 0..10000)");
    assertInvalid(() -> Instance.of("10.0.0.7", 8080).withWeight(-1),
        "weight", "weight: -1.0 (expected: 0..10000)");
    assertInvalid(() -> Instance.of("10.0.0.7", 8080).withWeight(Double.NaN),
        "weight", "weight: NaN (expected: 0..10000)");
    assertInvalid(() -> Instance.of("10.0.0.7", 0),
        "port", "port: 0 (expected: 1..65535)");
    assertInvalid(() -> Instance.of("10.0.0.7", 65536),
        "port", "port: 65536 (expected: 1..65535)");
    assertInvalid(() -> Instance.of("", 80),
        "ip", "ip: '' (expected: a non-empty IP literal or host name without whitespace)");
    assertInvalid(() -> Instance.of(null, 80),
        "ip", "ip: null (expected: a non-empty IP literal or host name without whitespace)");
    assertInvalid(() -> Instance.of("10.0.0.7", 80).withCluster(""),
        "cluster", "cluster: '' (expected: a non-empty name without whitespace)");
    Map<String, String> withNull = new HashMap<>();
    withNull.put("zone", null);
    assertInvalid(() -> Instance.of("10.0.0.7", 80).withMetadata(withNull),
        "metadata.zone", "metadata.zone: null (expected: a non-null value)");
  }

  @Test
  void boundariesAreAccepted() {
    assertThat(Instance.of("h", 1).withWeight(0).weight()).isZero();
    assertThat(Instance.of("h", 65535).withWeight(10000).weight()).isEqualTo(10000);
  }

  @Test
  void metadataIsAnUnmodifiableCopy() {
    Map<String, String> source = new HashMap<>(Map.of("b", "2", "a", "1"));
    Instance i = Instance.of("10.0.0.7", 8080).withMetadata(source);
    source.put("c", "3");
    assertThat(i.metadata()).containsExactly(Map.entry("a", "1"), Map.entry("b", "2"));
    assertThatThrownBy(() -> i.metadata().put("x", "y"))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void withCopiesChangeOneFieldAndKeepIdentityRules() {
    Instance a = Instance.of("10.0.0.7", 8080);
    Instance b = a.withWeight(5).withMetadata(Map.of("v", "2")).withHealthy(false);
    assertThat(a.weight()).isEqualTo(1.0);
    assertThat(b.weight()).isEqualTo(5);
    assertThat(b.healthy()).isFalse();
    assertThat(a.sameIdentity(b)).isTrue();
    assertThat(a.sameIdentity(a.withCluster("blue"))).isFalse();
    assertThat(a.sameIdentity(a.withPort(8081))).isFalse();
    assertThat(b.toBuilder().build()).isEqualTo(b);
  }

  private static void assertInvalid(ThrowingCallable call, String field, String message) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(RosterException.class, e -> {
          assertThat(e.code()).isEqualTo(RosterException.Code.INVALID_ARGUMENT);
          assertThat(e.field()).isEqualTo(field);
        })
        .hasMessage(message);
  }
}
