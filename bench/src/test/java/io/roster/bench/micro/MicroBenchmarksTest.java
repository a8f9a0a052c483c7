package io.roster.bench.micro;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.proto.v1.ServerFrame;
import org.junit.jupiter.api.Test;

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

  @Test
  void registryBenchmarksRun() throws Throwable {
    for (java.lang.reflect.Method m : RegistryBenchmark.class.getDeclaredMethods()) {
      if (m.isAnnotationPresent(org.openjdk.jmh.annotations.Benchmark.class)) {
        RegistryBenchmark b = new RegistryBenchmark();
        b.instances = 10;
        for (java.lang.reflect.Method setup : RegistryBenchmark.class.getDeclaredMethods()) {
          if (setup.isAnnotationPresent(org.openjdk.jmh.annotations.Setup.class)) {
            setup.invoke(b);
          }
        }
        m.invoke(b);
      }
    }
  }
}
