package io.roster.server.session;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.model.Instance;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.push.Outbound;
import io.roster.server.push.PushEngine;
import io.roster.server.push.PushPayload;
import io.roster.server.registry.Registry;
import io.roster.server.time.FakeScheduler;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A register refused at the instance limit must cost O(1), not a rescan of the session's 5,000
 * owned instances (~350–400 µs of CPU against ~15 µs for a no-op re-register; decision 16).
 * Compared as CPU time of this thread (not wall time), refusal against no-op, so that a busy
 * machine does not decide the outcome: a rescan is ~25 times dearer.
 */
class RefusalCostTest {

  private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

  @Test
  void aRefusalAtTheLimitCostsNoMoreThanANoOpRegister() {
    FakeScheduler scheduler = new FakeScheduler();
    Registry registry = new Registry(() -> 1);
    PushEngine engine = new PushEngine(registry, scheduler, Duration.ofMillis(20));
    registry.addListener(engine);
    SessionManager sessions = new SessionManager(registry, engine, scheduler, Duration.ofSeconds(3),
        SessionLimits.of(5000, 5000));
    Session session = sessions.open(new SessionInfo("c1", "client", "public", "", "", Map.of(), "127.0.0.1:1", 0),
        new Outbound() {
          @Override
          public boolean isReady() {
            return true;
          }

          @Override
          public int send(PushPayload payload) {
            return 0;
          }
        });
    ServiceKey big = ServiceKey.of("", "", "big");
    List<Instance> owned = new ArrayList<>();
    for (int i = 0; i < 5000; i++) {
      owned.add(new Instance("10.1." + (i / 250) + "." + (i % 250), 80, 1, true, true, true, "", Map.of(), ""));
    }
    session.batchRegister(big, owned);
    Instance again = owned.get(0);
    Instance over = new Instance("10.9.9.9", 1, 1, true, true, true, "", Map.of(), "");

    long noOp = 0;
    long refusal = 0;
    for (int round = 0; round < 3; round++) { // the first rounds warm the JIT up
      noOp = cpuNanos(() -> session.register(big, again));
      refusal = cpuNanos(() -> {
        try {
          session.register(big, over);
          throw new AssertionError("expected a refusal at the limit");
        } catch (RegistryException expected) {
          // Refused.
        }
      });
    }
    assertThat(refusal).as("CPU of 20,000 refusals (ns) against 20,000 no-op registers (%d ns)", noOp)
        .isLessThan(5 * noOp);
  }

  private static long cpuNanos(Runnable op) {
    long t0 = CPU.getCurrentThreadCpuTime();
    for (int i = 0; i < 20_000; i++) {
      op.run();
    }
    return CPU.getCurrentThreadCpuTime() - t0;
  }
}
