package io.roster.server.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.time.FakeScheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** One session's push queue on a fake clock, with a stream the test makes ready or not. */
class PushQueueTest {

  private static final Duration ACK_TIMEOUT = Duration.ofSeconds(3);

  private final FakeScheduler scheduler = new FakeScheduler();
  private final PushPipelineTest.RecordingOutbound out = new PushPipelineTest.RecordingOutbound();
  private final List<PushPayload> sent = out.sent;
  private final PushQueue queue = new PushQueue(out, scheduler, ACK_TIMEOUT);

  private static ServiceKey key(String name) {
    return ServiceKey.of("public", "DEFAULT_GROUP", name);
  }

  private static PushPayload payload(String service, long revision) {
    return new PushPayload(ServiceSnapshot.of(key(service), List.of(), revision));
  }

  private List<String> sentServices() {
    return sent.stream().map(p -> p.snapshot().service().name() + "@" + p.revision()).toList();
  }

  @Test
  void subscribingAndUnsubscribingWhileTheStreamIsBlockedKeepsTheQueueBounded() {
    out.ready = false;
    for (long r = 1; r <= 10_000; r++) {
      queue.offer(key("a"), payload("a", r));
      queue.forget(key("a"));
    }
    queue.offer(key("b"), payload("b", 1));
    assertThat(queue.pendingCount()).isEqualTo(1);
    assertThat(queue.lineLength()).isEqualTo(1);

    out.ready = true;
    queue.onReady();
    assertThat(sentServices()).containsExactly("b@1");
  }

  @Test
  void latestStateWinsAndKeepsItsPlaceInLine() {
    out.ready = false;
    queue.offer(key("a"), payload("a", 1));
    queue.offer(key("b"), payload("b", 2));
    queue.offer(key("a"), payload("a", 3));
    queue.offer(key("a"), payload("a", 2)); // older than what was offered: ignored
    out.ready = true;
    queue.onReady();
    assertThat(sentServices()).containsExactly("a@3", "b@2");
  }

  @Test
  void anAckedReSendLeavesTheLineSoALaterStateQueuesBehindTheOthers() {
    queue.offer(key("a"), payload("a", 1));
    out.ready = false;
    scheduler.advance(ACK_TIMEOUT); // a@1 unacked: back in line for a re-send
    queue.offer(key("b"), payload("b", 2));
    assertThat(queue.ack(Long.toHexString(1))).as("the client had a@1 after all").isTrue();
    queue.offer(key("a"), payload("a", 3));
    out.ready = true;
    queue.onReady();
    assertThat(sentServices()).containsExactly("a@1", "b@2", "a@3");
    assertThat(queue.resentCount()).isEqualTo(1);
  }

  @Test
  void acksMatchOnlyTheNewestPushOfAServiceAndCompleteWaiters() {
    queue.offer(key("a"), payload("a", 1));
    queue.offer(key("a"), payload("a", 2));
    CompletableFuture<Boolean> waiter = queue.whenAcked(key("a"), 2);
    assertThat(queue.unacked()).isEqualTo(1);
    assertThat(queue.ack(Long.toHexString(1))).as("superseded by a@2").isFalse();
    assertThat(waiter).isNotDone();
    assertThat(queue.ack(Long.toHexString(2))).isTrue();
    assertThat(waiter).isCompletedWithValue(true);
    assertThat(queue.unacked()).isZero();
    assertThat(queue.ack(Long.toHexString(2))).as("twice").isFalse();
  }

  @Test
  void anUnackedPushIsSentAgainAfterTheTimeoutAndItsAckStillCounts() {
    queue.offer(key("a"), payload("a", 1));
    scheduler.advance(ACK_TIMEOUT);
    assertThat(sentServices()).containsExactly("a@1", "a@1");
    assertThat(queue.ack(Long.toHexString(1))).isTrue();
    scheduler.advance(ACK_TIMEOUT.multipliedBy(2));
    assertThat(sent).hasSize(2);
    assertThat(scheduler.pendingDelaysNanos()).as("no timer once all is acked").isEmpty();
  }

  @Test
  void forgetAndCloseEndWaitersAndDropAcks() {
    queue.offer(key("a"), payload("a", 1));
    queue.offer(key("b"), payload("b", 2));
    CompletableFuture<Boolean> onA = queue.whenAcked(key("a"), 1);
    CompletableFuture<Boolean> onB = queue.whenAcked(key("b"), 2);
    queue.forget(key("a"));
    assertThat(onA).isCompletedWithValue(false);
    assertThat(queue.ack(Long.toHexString(1))).isFalse();
    queue.close();
    assertThat(onB).isCompletedWithValue(false);
    assertThat(queue.ack(Long.toHexString(2))).isFalse();
    queue.offer(key("c"), payload("c", 3));
    assertThat(sent).hasSize(2);
  }
}
