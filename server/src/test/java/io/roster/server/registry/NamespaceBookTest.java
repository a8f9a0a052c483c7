package io.roster.server.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.server.model.Instance;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Namespaces as operators create, edit and delete them, through the registry's commands (decision 97). */
class NamespaceBookTest {

  private final AtomicLong micros = new AtomicLong(1_000_000);
  private final Registry registry = new Registry(micros::get);
  private final Writer writer = Writer.direct(registry);
  private static final Owner OWNER = new Owner("n1@a", Owner.Kind.SESSION, "c1");

  private static Instance inst(String ip) {
    return new Instance(ip, 80, 1, true, true, true, "", Map.of(), "");
  }

  private Namespace put(String id, String name, String description, boolean create) {
    return writer.submit(new Command.PutNamespace(Namespace.checked(id, name, description), create)).join();
  }

  @Test
  void aCreatedNamespaceIsListedWhileEmptyBesidePublicAndTheNamespacesThatHaveServices() {
    registry.register(OWNER, ServiceKey.of("tenant-b", "", "orders"), inst("10.0.0.1"));
    put("tenant-a", "Tenant A", "the first tenant", true);

    assertThat(registry.namespaceBook().list()).containsExactly(
        new NamespaceCount("public", 0, 0, Namespace.PUBLIC),
        new NamespaceCount("tenant-a", 0, 0, new Namespace("tenant-a", "Tenant A", "the first tenant")),
        new NamespaceCount("tenant-b", 1, 1, null));
    assertThat(registry.namespaceBook().exists("tenant-a")).isTrue();
    assertThat(registry.namespaceBook().exists("tenant-b")).isTrue();
    assertThat(registry.namespaceBook().exists("tenant-c")).isFalse();
  }

  @Test
  void anEditChangesNameAndDescriptionAndANamespaceWithServicesMayBeNamed() {
    put("tenant-a", "Tenant A", "", true);
    put("tenant-a", "Tenant A (EU)", "moved", false);
    registry.register(OWNER, ServiceKey.of("tenant-b", "", "orders"), inst("10.0.0.1"));
    put("tenant-b", "Tenant B", "", false);

    assertThat(registry.namespaceBook().count("tenant-a").details()).isEqualTo(new Namespace("tenant-a", "Tenant A (EU)", "moved"));
    assertThat(registry.namespaceBook().count("tenant-b")).isEqualTo(
        new NamespaceCount("tenant-b", 1, 1, new Namespace("tenant-b", "Tenant B", "")));
    assertThatThrownBy(() -> put("tenant-c", "C", "", false)).isInstanceOf(RegistryException.class)
        .hasMessage("namespaceId: \"tenant-c\" does not exist")
        .extracting(e -> ((RegistryException) e).kind()).isEqualTo(RegistryException.Kind.NOT_FOUND);
    assertThatThrownBy(() -> put("tenant-a", "again", "", true)).isInstanceOf(RegistryException.class)
        .hasMessage("namespaceId: \"tenant-a\" already exists");
    assertThatThrownBy(() -> put("tenant-b", "again", "", true)).isInstanceOf(RegistryException.class)
        .hasMessage("namespaceId: \"tenant-b\" already exists");
  }

  @Test
  void aNamespaceThatIsNotEmptyIsNotDeletedAndNothingChanges() {
    put("tenant-a", "Tenant A", "", true);
    registry.register(OWNER, ServiceKey.of("tenant-a", "", "orders"), inst("10.0.0.1"));
    registry.register(OWNER, ServiceKey.of("tenant-a", "", "orders"), inst("10.0.0.2"));

    assertThatThrownBy(() -> writer.submit(new Command.DeleteNamespace("tenant-a")))
        .isInstanceOf(RegistryException.class)
        .hasMessage("namespaceId: \"tenant-a\" is not empty: it has 1 services and 2 instances; only an empty "
            + "namespace can be deleted")
        .extracting(e -> ((RegistryException) e).kind()).isEqualTo(RegistryException.Kind.FAILED_PRECONDITION);
    assertThat(registry.namespaceBook().count("tenant-a"))
        .isEqualTo(new NamespaceCount("tenant-a", 1, 2, new Namespace("tenant-a", "Tenant A", "")));

    registry.removeOwner(OWNER);
    assertThat(writer.submit(new Command.DeleteNamespace("tenant-a")).join()).isEqualTo(new Namespace("tenant-a", "Tenant A", ""));
    assertThat(registry.namespaceBook().exists("tenant-a")).isFalse();
    assertThatThrownBy(() -> writer.submit(new Command.DeleteNamespace("tenant-a"))).isInstanceOf(RegistryException.class)
        .hasMessage("namespaceId: \"tenant-a\" does not exist");
  }

  @Test
  void publicCannotBeCreatedEditedOrDeleted() {
    assertThatThrownBy(() -> put("public", "mine", "", true)).isInstanceOf(RegistryException.class)
        .hasMessageContaining("\"public\" is the default namespace");
    assertThatThrownBy(() -> put("public", "mine", "", false)).isInstanceOf(RegistryException.class)
        .hasMessageContaining("\"public\" is the default namespace");
    assertThatThrownBy(() -> writer.submit(new Command.DeleteNamespace("public"))).isInstanceOf(RegistryException.class)
        .hasMessage("namespaceId: \"public\" is the default namespace and cannot be deleted");
    assertThat(registry.namespaceBook().count("public").details()).isEqualTo(Namespace.PUBLIC);
  }

  @Test
  void badFieldsAreRefusedNamingTheFieldTheValueAndTheLimit() {
    assertThatThrownBy(() -> Namespace.checked("tenant a", "A", "")).isInstanceOf(RegistryException.class)
        .hasMessage("namespaceId: \"tenant a\" (expected: 1..128 characters of [A-Za-z0-9_.:-])");
    assertThatThrownBy(() -> Namespace.checked("x".repeat(129), "A", "")).isInstanceOf(RegistryException.class)
        .hasMessageStartingWith("namespaceId: \"xxx").hasMessageEndingWith("(expected: 1..128 characters of [A-Za-z0-9_.:-])");
    assertThatThrownBy(() -> Namespace.checked("a", "", "")).isInstanceOf(RegistryException.class)
        .hasMessage("namespaceName: \"\" (expected: 1..128 characters without control characters or any of @#$%^&*)");
    assertThatThrownBy(() -> Namespace.checked("a", "A&B", "")).isInstanceOf(RegistryException.class)
        .hasMessage("namespaceName: \"A&B\" (expected: 1..128 characters without control characters or any of @#$%^&*)");
    assertThatThrownBy(() -> Namespace.checked("a", "A", "d".repeat(257))).isInstanceOf(RegistryException.class)
        .hasMessageStartingWith("namespaceDesc: \"ddd").hasMessageEndingWith("(expected: 0..256 characters without control characters)");
  }

  @Test
  void createdNamespacesAreBoundedAndARefusalChangesNothing() {
    for (int i = 0; i < Namespace.MAX_CREATED; i++) {
      put("ns-" + i, "n", "", true);
    }
    assertThatThrownBy(() -> put("one-more", "n", "", true)).isInstanceOf(RegistryException.class)
        .hasMessage("namespaceId: \"one-more\" would be created namespace 1001, over the limit of 1000")
        .extracting(e -> ((RegistryException) e).kind()).isEqualTo(RegistryException.Kind.RESOURCE_EXHAUSTED);
    assertThat(registry.namespaceBook().created()).hasSize(Namespace.MAX_CREATED);
    put("ns-1", "edited", "", false);
  }

  @Test
  void anImageCarriesTheCreatedNamespacesAndARestoreReplacesThem() {
    put("tenant-a", "Tenant A", "d", true);
    Registry.Image image = registry.image();
    assertThat(image.namespaces()).containsExactly(new Namespace("tenant-a", "Tenant A", "d"));

    Registry other = new Registry(micros::get);
    Writer.direct(other).submit(new Command.PutNamespace(Namespace.checked("stale", "S", ""), true));
    other.restore(image);
    assertThat(other.namespaceBook().created()).containsExactly(new Namespace("tenant-a", "Tenant A", "d"));
  }
}
