package io.roster.server.naming;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.server.model.Instance;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Registry;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The one rule of listing services, as each protocol names its fields. */
class ServiceListsTest {

  private static final ServiceLists.Fields NACOS = new ServiceLists.Fields("namespace", "groupName", "pageNo", "pageSize");
  private final Registry registry = new Registry(() -> 1_000_000L);

  @BeforeEach
  void threeServices() {
    for (String name : new String[] {"a", "b", "c"}) {
      registry.register(Owner.session("n1", "c1"), ServiceKey.of("public", "g", name),
          new Instance("10.0.0.1", 80, 1, true, true, true, "", Map.of(), ""));
    }
  }

  @Test
  void aPageOfTheSortedServicesWithTheTotal() {
    Registry.ServicePage page = ServiceLists.page(registry, ServiceLists.Fields.ROSTER, "public", "g", 2, 2, 1000);
    assertThat(page.total()).isEqualTo(3);
    assertThat(page.services()).extracting(ServiceKey::name).containsExactly("c");
  }

  @Test
  void aPagePastTheEndIsEmptyEvenPastWhatAnIntCanSkip() {
    assertThat(ServiceLists.page(registry, NACOS, "public", "g", 3, 2, Integer.MAX_VALUE).services()).isEmpty();
    Registry.ServicePage far = ServiceLists.page(registry, NACOS, "public", "g", Integer.MAX_VALUE, Integer.MAX_VALUE,
        Integer.MAX_VALUE);
    assertThat(far.services()).isEmpty();
    assertThat(far.total()).isEqualTo(3);
  }

  @Test
  void eachErrorNamesTheProtocolsFieldTheValueAndTheLimit() {
    assertThatThrownBy(() -> ServiceLists.page(registry, ServiceLists.Fields.ROSTER, "public", "", 1, 1001, 1000))
        .isInstanceOf(RegistryException.class).hasMessage("page_size: 1001 (expected: 1..1000)");
    assertThatThrownBy(() -> ServiceLists.page(registry, NACOS, "public", "g", 0, 10, Integer.MAX_VALUE))
        .isInstanceOf(RegistryException.class).hasMessage("pageNo: 0 (expected: a page number from 1)");
    assertThatThrownBy(() -> ServiceLists.page(registry, NACOS, "public", "a b", 1, 10, Integer.MAX_VALUE))
        .isInstanceOf(RegistryException.class).hasMessageStartingWith("groupName: ");
    assertThatThrownBy(() -> ServiceLists.page(registry, ServiceLists.Fields.ROSTER, "", "", 1, 10, 1000))
        .isInstanceOf(RegistryException.class).hasMessageStartingWith("namespace: ");
  }
}
