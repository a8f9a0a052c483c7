package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.client.Instance;
import io.roster.client.RosterClient;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A JVM that runs out of memory loses threads at random (event loops, the push thread) and goes
 * on half-alive: port open, health failing, SIGTERM ignored. A Roster server is crash-only: it
 * ships with {@code -XX:+ExitOnOutOfMemoryError} (server/jvm.options, as {@code make run}
 * starts it), so it exits and whatever supervises it starts a fresh one, to which the clients
 * reconnect and redo.
 */
class OutOfMemoryTest {

  @Test
  void aServerOutOfMemoryExitsInsteadOfLingering() throws Exception {
    int port = Ports.free();
    ServerProcess server = ServerProcess.launch(List.of("-Xmx64m"), "127.0.0.1", port);
    server.awaitServing(Timing.seconds(30));
    Map<String, String> metadata = new HashMap<>();
    for (int i = 0; i < 15; i++) {
      metadata.put("k" + i, "v".repeat(1000));
    }
    List<RosterClient> clients = new ArrayList<>();
    try {
      // 4 connections x 5,000 instances x 15 KB of metadata: ~300 MB, within every limit but
      // far over a 64 MB heap.
      outer:
      for (int c = 0; c < 4; c++) {
        RosterClient client = RosterClient.builder().serverAddresses(server.address())
            .requestTimeout(Timing.seconds(5)).drainTimeout(Duration.ZERO).build();
        clients.add(client);
        for (int s = 0; s < 34; s++) {
          List<Instance> batch = new ArrayList<>();
          for (int i = 0; i < 147; i++) {
            batch.add(Instance.builder().ip("10." + c + "." + s + "." + i).port(80).metadata(metadata).build());
          }
          if (!server.process.isAlive()) {
            break outer;
          }
          try {
            client.batchRegisterInstance("oom-" + c + "-" + s, batch);
          } catch (RuntimeException expectedOnceMemoryRunsOut) {
            break outer;
          }
        }
      }
      await().atMost(Timing.seconds(60)).until(() -> !server.process.isAlive());
      assertThat(server.process.exitValue()).isNotZero();
      assertThat(server.output()).contains("OutOfMemoryError");
    } finally {
      clients.forEach(c -> {
        try {
          c.close();
        } catch (RuntimeException ignored) {
          // The server is gone.
        }
      });
      server.close();
    }
  }
}
