package io.roster.bench.micro;

import io.roster.server.model.Instance;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.push.PushPayload;
import io.roster.server.rpc.PushEncoder;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
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
 * Building a {@link ServiceSnapshot} (filter, sort, checksum), the checksum alone, and build +
 * encode of a {@link PushPayload} into a {@code ServerFrame} push with the server's own
 * {@link PushEncoder}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class SnapshotBenchmark {

  @Param({"10", "100", "1000"})
  public int instances;

  private ServiceKey key;
  private List<Instance> registered;
  private ServiceSnapshot built;
  private MethodHandle checksum;
  private long revision = 1;

  private static final Function<PushPayload, Object> ENCODER = PushEncoder::encode;

  @Setup(Level.Trial)
  public void setUp() throws ReflectiveOperationException {
    key = ServiceKey.of("public", "DEFAULT_GROUP", "orders");
    registered = new ArrayList<>(instances);
    for (int i = instances - 1; i >= 0; i--) { // reverse order: the build really sorts
      registered.add(new Instance("10.1." + (i / 250) + "." + (i % 250 + 1), 8080, 1.0, true, true, true,
          "DEFAULT", Map.of("zone", "z" + (i % 3), "version", "1.2." + (i % 7)), null).withId(key));
    }
    built = ServiceSnapshot.of(key, registered, 1);
    Method m = ServiceSnapshot.class.getDeclaredMethod("checksum", ServiceKey.class, List.class, boolean.class);
    m.setAccessible(true);
    checksum = MethodHandles.lookup().unreflect(m);
  }

  /** Filter (enabled), sort by (ip, port, cluster), checksum. */
  @Benchmark
  public ServiceSnapshot build() {
    return ServiceSnapshot.of(key, registered, ++revision);
  }

  /** The checksum of an already sorted list (SHA-256 over the canonical text). */
  @Benchmark
  public String checksum() throws Throwable {
    return (String) checksum.invoke(key, built.instances(), false);
  }

  /** What one change costs the push pipeline before any session: build, then encode once. */
  @Benchmark
  public Object buildAndEncode() {
    return new PushPayload(ServiceSnapshot.of(key, registered, ++revision)).encoded(ENCODER);
  }

  /** A clusters-filtered view that drops nothing (the common case: returns the same snapshot). */
  @Benchmark
  public ServiceSnapshot viewUnfiltered() {
    return built.view(Set.of("DEFAULT"), false);
  }
}
