package io.roster.server.session;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.push.Outbound;
import io.roster.server.push.PushEngine;
import io.roster.server.push.PushPayload;
import io.roster.server.registry.Registry;
import io.roster.server.time.FakeScheduler;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** Balance moves only sessions that have settled here (decision 33), the newest of them first. */
class BalanceShedTest {

  private static final Duration SETTLED_FOR = Duration.ofSeconds(10);

  private final FakeScheduler time = new FakeScheduler();
  private final Registry registry = new Registry(() -> 1);
  private final SessionManager sessions = new SessionManager(registry, new PushEngine(registry, time, Duration.ofMillis(20)),
      time, Duration.ofSeconds(3), SessionLimits.of(5000, 5000));
  private final List<String> asked = new CopyOnWriteArrayList<>();

  private void open(String id) {
    sessions.open(new SessionInfo(id, "client-" + id, "public", "", "", Map.of(), "127.0.0.1:1", time.currentTimeMillis()),
        new Outbound() {
          @Override
          public boolean isReady() {
            return true;
          }

          @Override
          public int send(PushPayload payload) {
            return 0;
          }

          @Override
          public boolean move(String reason, String suggestedServer) {
            asked.add(id + " -> " + suggestedServer);
            return true;
          }
        });
  }

  @Test
  void balanceMovesTheNewestSettledSessionsAndNeverOneThatJustArrived() {
    open("old1");
    time.advance(Duration.ofSeconds(1));
    open("old2");
    time.advance(Duration.ofSeconds(1));
    open("old3");
    time.advance(SETTLED_FOR);
    open("justMoved"); // a client in the middle of a move: its redo may not be applied yet

    assertThat(sessions.shed(2, SETTLED_FOR, "balance", "m2:9848")).isEqualTo(2);
    assertThat(asked).containsExactlyInAnyOrder("old3 -> m2:9848", "old2 -> m2:9848");

    asked.clear();
    assertThat(sessions.shed(10, SETTLED_FOR, "balance", "m2:9848")).isEqualTo(3);
    assertThat(asked).doesNotContain("justMoved -> m2:9848");
  }
}
