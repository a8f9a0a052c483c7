package io.roster.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.client.Instance;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class InstancesDiffTest {

  private final Instance a = Instance.of("10.0.0.1", 80);
  private final Instance b = Instance.of("10.0.0.2", 80);
  private final Instance c = Instance.of("10.0.0.3", 80);

  @Test
  void addedRemovedAndModifiedByIdentity() {
    Instance bHeavier = b.withWeight(3);
    InstancesDiff diff = InstancesDiff.between(List.of(a, b), List.of(bHeavier, c));
    assertThat(diff.added()).containsExactly(c);
    assertThat(diff.removed()).containsExactly(a);
    assertThat(diff.modified()).containsExactly(bHeavier);
    assertThat(diff.isEmpty()).isFalse();
  }

  @Test
  void clusterIsPartOfIdentity() {
    Instance aBlue = a.withCluster("blue");
    InstancesDiff diff = InstancesDiff.between(List.of(a), List.of(aBlue));
    assertThat(diff.added()).containsExactly(aBlue);
    assertThat(diff.removed()).containsExactly(a);
    assertThat(diff.modified()).isEmpty();
  }

  @Test
  void metadataOrHealthChangesAreModifications() {
    Instance aMeta = a.withMetadata(Map.of("v", "2"));
    Instance bSick = b.withHealthy(false);
    InstancesDiff diff = InstancesDiff.between(List.of(a, b), List.of(aMeta, bSick));
    assertThat(diff.modified()).containsExactly(aMeta, bSick);
    assertThat(diff.added()).isEmpty();
    assertThat(diff.removed()).isEmpty();
  }

  @Test
  void sameContentInAnotherOrderIsNoChange() {
    assertThat(InstancesDiff.between(List.of(a, b), List.of(b, a)).isEmpty()).isTrue();
    assertThat(InstancesDiff.between(List.of(), List.of()).isEmpty()).isTrue();
  }
}
