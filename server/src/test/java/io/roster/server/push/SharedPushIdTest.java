package io.roster.server.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.time.FakeScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Regression: two services pushed to one session with the same push id. Every service that
 * does not exist is pushed at the registry's absent revision, so when a session's instances
 * leave two services at once (a drain, a session's end), both removals can go out as pushes
 * with the same id. The queue kept one slot per push id, so the second push overwrote the
 * first one's entry: the client's ack cleared only one, and the other was never acked, never
 * re-sent, and held a drain until its timeout (seen as a flaky DrainRulesTest). One ack must
 * clear every push of the session that carries its id (docs/protocol.md, "Pushes and
 * pushAck").
 */
class SharedPushIdTest {

  private static final Duration ACK_TIMEOUT = Duration.ofSeconds(3);

  private final FakeScheduler scheduler = new FakeScheduler();
  private final List<PushPayload> sent = new ArrayList<>();
  private final PushQueue queue = new PushQueue(new Outbound() {
    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public int send(PushPayload payload) {
      sent.add(payload);
      return 0;
    }
  }, scheduler, ACK_TIMEOUT);

  private static ServiceKey key(String name) {
    return ServiceKey.of("public", "DEFAULT_GROUP", name);
  }

  private static PushPayload absent(String service, long absentRevision) {
    return new PushPayload(ServiceSnapshot.of(key(service), List.of(), absentRevision));
  }

  @Test
  void oneAckClearsEveryPushCarryingItsId() {
    queue.offer(key("pay"), absent("pay", 41));
    queue.offer(key("ship"), absent("ship", 41));
    CompletableFuture<Boolean> pay = queue.whenAcked(key("pay"), 41);
    CompletableFuture<Boolean> ship = queue.whenAcked(key("ship"), 41);
    assertThat(sent).extracting(PushPayload::pushId).containsExactly("29", "29");

    assertThat(queue.ack("29")).isTrue();

    assertThat(queue.unacked()).isZero();
    assertThat(pay).isCompletedWithValue(true);
    assertThat(ship).isCompletedWithValue(true);
    scheduler.advance(ACK_TIMEOUT.multipliedBy(2));
    assertThat(sent).as("nothing left to re-send").hasSize(2);
  }

  @Test
  void unackedPushesSharingAnIdAreAllSentAgain() {
    queue.offer(key("pay"), absent("pay", 41));
    queue.offer(key("ship"), absent("ship", 41));

    scheduler.advance(ACK_TIMEOUT);

    assertThat(sent).extracting(p -> p.snapshot().service().name())
        .containsExactlyInAnyOrder("pay", "ship", "pay", "ship");
    assertThat(queue.ack("29")).isTrue();
    assertThat(queue.unacked()).isZero();
  }
}
