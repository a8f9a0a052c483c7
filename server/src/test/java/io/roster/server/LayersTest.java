package io.roster.server;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import io.roster.server.probe.ProbePolicy;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The server's package layers (decision 90; the order is described in the server's
 * package-info): {@code model} and {@code time} at the bottom, then {@code registry}, {@code
 * push}, {@code session}, {@code naming}, and the adapters on top (the gRPC adapters write their
 * streams through {@code stream}); {@code cluster}, {@code store}
 * and {@code probe} plug in through {@code registry.Writer} and the core never reaches them (but
 * {@link ProbePolicy}, a value the registration rules read). Each
 * layer below names every layer it may use; a dependency not listed fails the build. The main
 * classes are read as compiled, tests left out.
 */
class LayersTest {

  private static final String SERVER = "io.roster.server";

  /**
   * Which adapter may use which: {@code http} is the shared HTTP/1.1 layer of the adapters that
   * speak HTTP, and no adapter uses another one otherwise.
   */
  static final Map<String, List<String>> ADAPTERS_MAY_USE = Map.of(
      "rpc", List.of(),
      "nacos", List.of("http"),
      "admin", List.of("http"),
      "metrics", List.of("http"),
      "dns", List.of(),
      "http", List.of());

  /** Every package of the server but the wiring ({@code io.roster.server} itself). */
  static final List<String> PACKAGES = List.of("model", "time", "auth", "tls", "config", "registry", "codec", "push",
      "session", "naming", "probe", "store", "cluster", "stream", "http", "rpc", "nacos", "admin", "metrics", "dns");

  /**
   * {@link ProbePolicy}, its nested types and their arrays: the value that says where the server
   * may probe, which the core's registration rules read; the rest of {@code probe} is the prober.
   */
  static final DescribedPredicate<JavaClass> PROBE_POLICY = DescribedPredicate.describe("ProbePolicy",
      c -> {
        String name = c.getBaseComponentType().getName();
        return name.equals(ProbePolicy.class.getName()) || name.startsWith(ProbePolicy.class.getName() + "$");
      });

  private static JavaClasses main;

  @BeforeAll
  static void importMainClasses() {
    main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages(SERVER);
  }

  static LayeredArchitecture layers() {
    return layeredArchitecture().consideringOnlyDependenciesInLayers()
        .layer("model").definedBy(SERVER + ".model..")
        .layer("time").definedBy(SERVER + ".time..")
        .layer("auth").definedBy(SERVER + ".auth..")
        .layer("tls").definedBy(SERVER + ".tls..")
        .layer("config").definedBy(SERVER + ".config..")
        .layer("registry").definedBy(SERVER + ".registry..")
        .layer("codec").definedBy(SERVER + ".codec..")
        .layer("push").definedBy(SERVER + ".push..")
        .layer("session").definedBy(SERVER + ".session..")
        .layer("naming").definedBy(SERVER + ".naming..")
        .layer("probe policy").definedBy(PROBE_POLICY)
        .layer("probe").definedBy(resideInAPackage(SERVER + ".probe..").and(not(PROBE_POLICY)))
        .layer("store").definedBy(SERVER + ".store..")
        .layer("cluster").definedBy(SERVER + ".cluster..")
        .layer("stream").definedBy(SERVER + ".stream..")
        .layer("http").definedBy(SERVER + ".http..")
        .layer("rpc").definedBy(SERVER + ".rpc..")
        .layer("nacos").definedBy(SERVER + ".nacos..")
        .layer("admin").definedBy(SERVER + ".admin..")
        .layer("metrics").definedBy(SERVER + ".metrics..")
        .layer("dns").definedBy(SERVER + ".dns..")
        .layer("server").definedBy(SERVER)

        .whereLayer("model").mayNotAccessAnyLayer()
        .whereLayer("time").mayNotAccessAnyLayer()
        .whereLayer("auth").mayOnlyAccessLayers("model", "time")
        .whereLayer("tls").mayOnlyAccessLayers("time")
        .whereLayer("registry").mayOnlyAccessLayers("model", "time")
        .whereLayer("push").mayOnlyAccessLayers("registry", "model", "time")
        .whereLayer("session").mayOnlyAccessLayers("push", "registry", "probe policy", "auth", "model", "time")
        .whereLayer("naming").mayOnlyAccessLayers("session", "push", "registry", "probe policy", "auth", "model",
            "time")

        .whereLayer("codec").mayOnlyAccessLayers("registry", "model")
        .whereLayer("probe policy").mayNotAccessAnyLayer()
        .whereLayer("probe").mayOnlyAccessLayers("probe policy", "registry", "model", "time")
        .whereLayer("store").mayOnlyAccessLayers("codec", "registry", "model", "time")
        .whereLayer("cluster").mayOnlyAccessLayers("store", "codec", "registry", "config", "tls", "model", "time")
        .whereLayer("config").mayOnlyAccessLayers("probe policy", "tls")

        .whereLayer("stream").mayOnlyAccessLayers("time")
        .whereLayer("http").mayOnlyAccessLayers("session", "registry", "auth", "tls", "model", "time")
        .whereLayer("rpc").mayOnlyAccessLayers("stream", "naming", "session", "push", "registry", "cluster", "probe policy",
            "config", "auth", "tls", "model", "time")
        .whereLayer("nacos").mayOnlyAccessLayers("http", "stream", "naming", "session", "push", "registry", "probe policy",
            "auth", "model", "time")
        .whereLayer("admin").mayOnlyAccessLayers("http", "naming", "session", "push", "registry", "cluster", "store",
            "auth", "model", "time")
        .whereLayer("metrics").mayOnlyAccessLayers("http", "session", "push", "registry", "cluster", "probe",
            "auth", "model", "time")
        .whereLayer("dns").mayOnlyAccessLayers("session", "registry", "model", "time")
        .whereLayer("server").mayNotBeAccessedByAnyLayer();
  }

  @Test
  void layersUseOnlyTheLayersBelowThem() {
    layers().check(main);
  }

  /** A class in no layer would not be checked: a new package must be given its layer here first. */
  @Test
  void everyPackageHasItsLayer() {
    String[] packages = PACKAGES.stream().map(p -> SERVER + "." + p + "..").toArray(String[]::new);
    classes().should().resideInAnyPackage(packages).orShould().resideInAPackage(SERVER).check(main);
  }

  @Test
  void packagesAreFreeOfCycles() {
    slices().matching(SERVER + ".(*)..").should().beFreeOfCycles().check(main);
  }

  @Test
  void adaptersUseNoOtherAdapterBeyondTheirMap() {
    ADAPTERS_MAY_USE.forEach((adapter, mayUse) -> {
      String[] others = ADAPTERS_MAY_USE.keySet().stream()
          .filter(a -> !a.equals(adapter) && !mayUse.contains(a)).map(a -> SERVER + "." + a + "..")
          .toArray(String[]::new);
      ArchRule rule = noClasses().that().resideInAPackage(SERVER + "." + adapter + "..")
          .should().dependOnClassesThat().resideInAnyPackage(others);
      rule.check(main);
    });
  }
}
