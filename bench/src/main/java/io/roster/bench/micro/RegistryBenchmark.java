package io.roster.bench.micro;

import io.roster.server.model.Instance;
import io.roster.server.model.Owner;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Registry;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@link Registry} register and deregister on a registry of 1,000 services, each already holding
 * {@code instances} instances of other owners; the change listener does nothing (the push
 * pipeline is not part of this). Single-threaded.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RegistryBenchmark {

  @Param({"10", "100"})
  public int instances;

  private static final int SERVICES = 1000;
  private static final Owner BENCH = owner("bench");
  private static final Owner OWNER_0 = owner("owner-0");

  private Registry registry;
  private ServiceKey[] keys;
  private Instance fresh;
  private InstanceKey freshKey;
  private Instance existing;
  private int next;

  @Setup(Level.Trial)
  public void setUp() {
    registry = new Registry(() -> System.currentTimeMillis() * 1000);
    keys = new ServiceKey[SERVICES];
    for (int s = 0; s < SERVICES; s++) {
      keys[s] = ServiceKey.of("public", "DEFAULT_GROUP", "svc-" + s);
      for (int i = 0; i < instances; i++) {
        registry.register(owner("owner-" + i), keys[s], instance("10.0." + (i / 250) + "." + (i % 250 + 1), 8080));
      }
    }
    fresh = instance("10.9.9.9", 9090);
    freshKey = fresh.key();
    existing = instance("10.0.0.1", 8080);
  }

  static Instance instance(String ip, int port) {
    return new Instance(ip, port, 1.0, true, true, true, "DEFAULT", Map.of(), null);
  }

  private ServiceKey nextKey() {
    ServiceKey k = keys[next];
    next = next + 1 == SERVICES ? 0 : next + 1;
    return k;
  }

  /** One register of a new instance and its deregister: two revisions, two change reports. */
  @Benchmark
  public boolean registerThenDeregister() {
    ServiceKey k = nextKey();
    registry.register(BENCH, k, fresh);
    return registry.deregister(BENCH, k, freshKey);
  }

  /** Registering an instance that is already there, unchanged: no revision, no report. */
  @Benchmark
  public Instance registerUnchanged() {
    return registry.register(OWNER_0, nextKey(), existing);
  }

  /** The snapshot of a service right after a change (built on first read, then cached). */
  @Benchmark
  public Object registerThenSnapshot() {
    ServiceKey k = nextKey();
    registry.register(BENCH, k, fresh);
    Object s = registry.snapshot(k);
    registry.deregister(BENCH, k, freshKey);
    return s;
  }

  /** A session owner on a node with no id (a lone registry). */
  private static Owner owner(String connectionId) {
    return Owner.session("", connectionId);
  }
}
