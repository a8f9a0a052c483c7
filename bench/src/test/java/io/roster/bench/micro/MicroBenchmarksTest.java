package io.roster.bench.micro;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.proto.v1.ServerFrame;
import io.roster.server.model.Instance;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.registry.Registry;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

/**
 * Runs every microbenchmark method once, so that a change to the code they reach into (some by
 * reflection) breaks `make test` instead of a later `make bench`.
 */
class MicroBenchmarksTest {

  @Test
  void snapshotBenchmarksRunAndAgreeWithTheServer() throws Throwable {
    SnapshotBenchmark b = new SnapshotBenchmark();
    b.instances = 10;
    b.setUp();
    assertThat(b.build().instances()).hasSize(10);
    assertThat(b.checksum()).isEqualTo(b.build().checksum());
    byte[] encoded = (byte[]) b.buildAndEncode();
    assertThat(ServerFrame.parseFrom(encoded).getPush().getServiceInfo().getInstancesCount()).isEqualTo(10);
    assertThat(b.viewUnfiltered().instances()).hasSize(10);
  }

  /**
   * Each registry benchmark runs once (so a change to the code it reaches breaks here) and does
   * what its Javadoc says it measures: register + deregister of a new instance is two reported
   * changes; re-registering an existing instance unchanged reports none; the snapshot taken
   * right after a register lists the new instance beside the {@code instances} already there.
   * A new benchmark method without an expectation here fails the test.
   */
  @Test
  void registryBenchmarksDoWhatTheyMeasure() throws Throwable {
    Map<String, BiConsumer<Object, Integer>> expectations = Map.of(
        "registerThenDeregister", (result, changes) -> {
          assertThat(result).as("the fresh instance was deregistered").isEqualTo(true);
          assertThat(changes).as("changes reported").isEqualTo(2);
        },
        "registerUnchanged", (result, changes) -> {
          assertThat(((Instance) result).ip()).isEqualTo("10.0.0.1");
          assertThat(changes).as("an unchanged re-register reports nothing").isZero();
        },
        "registerThenSnapshot", (result, changes) -> {
          ServiceSnapshot snapshot = (ServiceSnapshot) result;
          assertThat(snapshot.instances()).hasSize(11);
          assertThat(snapshot.instances()).extracting(Instance::ip).contains("10.9.9.9");
          assertThat(changes).as("changes reported").isEqualTo(2);
        });
    List<String> run = new ArrayList<>();
    for (Method m : RegistryBenchmark.class.getDeclaredMethods()) {
      if (!m.isAnnotationPresent(Benchmark.class)) {
        continue;
      }
      assertThat(expectations).as("an expectation for the benchmark %s", m.getName()).containsKey(m.getName());
      RegistryBenchmark b = new RegistryBenchmark();
      b.instances = 10;
      for (Method setup : RegistryBenchmark.class.getDeclaredMethods()) {
        if (setup.isAnnotationPresent(Setup.class)) {
          setup.invoke(b);
        }
      }
      Field field = RegistryBenchmark.class.getDeclaredField("registry");
      field.setAccessible(true);
      AtomicInteger changes = new AtomicInteger();
      ((Registry) field.get(b)).addListener(change -> changes.incrementAndGet());
      Object result = m.invoke(b);
      expectations.get(m.getName()).accept(result, changes.get());
      run.add(m.getName());
    }
    assertThat(run).containsExactlyInAnyOrderElementsOf(expectations.keySet());
  }
}
