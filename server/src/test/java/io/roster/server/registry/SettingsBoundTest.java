package io.roster.server.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Settings outlive instances, so without a bound 10,000 UpdateService calls on services that do
 * not exist would keep about 168 MB of heap. What all settings take together is bounded; a
 * refusal changes nothing (decision 18).
 */
class SettingsBoundTest {

  private static Map<String, String> bigMetadata() {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < 15; i++) {
      m.put("k" + i, "v".repeat(1000));
    }
    return m;
  }

  @Test
  void settingsOfAbsentServicesAreBoundedAndFreedByDefaults() {
    long limit = 1024 * 1024;
    Registry registry = new Registry(() -> 1, limit);
    int accepted = 0;
    RegistryException refused = null;
    for (int i = 0; i < 10_000 && refused == null; i++) {
      ServiceKey key = ServiceKey.of("", "", "absent-" + i);
      try {
        registry.updateSettings(key, s -> s.withMetadata(bigMetadata()));
        accepted++;
      } catch (RegistryException e) {
        refused = e;
      }
    }
    assertThat(refused).isNotNull();
    assertThat(refused.kind()).isEqualTo(RegistryException.Kind.RESOURCE_EXHAUSTED);
    assertThat(refused.getMessage()).contains("--max-service-settings-bytes").contains("limit: " + limit);
    assertThat(accepted).isBetween(20, 40);
    assertThat(registry.settingsBytes()).isLessThanOrEqualTo(limit);
    ServiceKey last = ServiceKey.of("", "", "absent-" + accepted);
    assertThat(registry.settings(last)).isEqualTo(ServiceSettings.DEFAULT);

    // Back to the defaults frees the room again.
    registry.updateSettings(ServiceKey.of("", "", "absent-0"), s -> ServiceSettings.DEFAULT);
    registry.updateSettings(last, s -> s.withMetadata(bigMetadata()));
    assertThat(registry.settings(last).metadata()).hasSize(15);

    RegistryException again = catchThrowableOfType(RegistryException.class,
        () -> registry.updateSettings(ServiceKey.of("", "", "absent-x"), s -> s.withMetadata(bigMetadata())));
    assertThat(again).isNotNull();
    // A change that makes settings smaller is always allowed.
    registry.updateSettings(last, s -> s.withProtectThreshold(0.5).withMetadata(Map.of()));
    assertThat(registry.settings(last).protectThreshold()).isEqualTo(0.5);
  }
}
