package io.roster.client.internal;

import static io.roster.client.internal.Fixtures.DEMO;
import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.roster.client.InstancesChangeEvent;
import io.roster.proto.v1.QueryInstancesResponse;
import io.roster.proto.v1.ServiceInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The poll fallback on a fake clock: no sleeps, exact delays. */
class PollerTest {

  private final FakeClock clock = new FakeClock();
  private final ReentrantLock lock = new ReentrantLock();
  private final List<String> checksumsSent = new ArrayList<>();
  private final List<InstancesChangeEvent> events = new ArrayList<>();
  private CompletableFuture<QueryAnswer> nextAnswer;
  private Subscription sub;
  private Poller poller;

  @BeforeEach
  void setUp() {
    sub = new Subscription(DEMO, Runnable::run);
    sub.addListener(events::add);
    poller = new Poller(clock.scheduler(), Duration.ofSeconds(10), Duration.ofSeconds(60), new SerialContext(),
        new Poller.Target() {
          @Override
          public CompletableFuture<QueryAnswer> query(ServiceKey key, String known) {
            checksumsSent.add(known);
            return nextAnswer;
          }

          @Override
          public void apply(Subscription s, QueryAnswer response) {
            s.offer(response.snapshot());
            s.drainEvents();
          }
        });
  }

  @Test
  void pollsEveryIntervalWithTheKnownChecksum() {
    nextAnswer = answer(Fixtures.info(DEMO, 10, "c10", Fixtures.proto("10.0.0.1", 80)));
    poller.start(sub);
    assertThat(clock.pendingDelays()).containsExactly(Duration.ofSeconds(10));

    clock.forward(Duration.ofSeconds(10));
    assertThat(checksumsSent).containsExactly("");
    assertThat(events).hasSize(1);

    nextAnswer = CompletableFuture.completedFuture(ProtoMapper.fromProto(QueryInstancesResponse.newBuilder()
        .setNotModified(true).build()));
    clock.forward(Duration.ofSeconds(10));
    assertThat(checksumsSent).containsExactly("", "c10");
    assertThat(events).as("not_modified changes nothing").hasSize(1);
    assertThat(clock.pendingDelays()).containsExactly(Duration.ofSeconds(10));
  }

  @Test
  void failuresBackOffExponentiallyUpToTheMaximumAndResetOnSuccess() {
    nextAnswer = CompletableFuture.failedFuture(Status.UNAVAILABLE.asRuntimeException());
    poller.start(sub);
    List<Duration> waits = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      Duration wait = clock.pendingDelays().get(0);
      waits.add(wait);
      clock.forward(wait);
    }
    assertThat(waits).containsExactly(Duration.ofSeconds(10), Duration.ofSeconds(20),
        Duration.ofSeconds(40), Duration.ofSeconds(60), Duration.ofSeconds(60));

    nextAnswer = answer(Fixtures.info(DEMO, 1, "c1"));
    clock.forward(clock.pendingDelays().get(0));
    assertThat(clock.pendingDelays()).containsExactly(Duration.ofSeconds(10));
  }

  @Test
  void aPollNeverMovesTheCacheBackwards() {
    lock.lock();
    try {
      sub.offer(Fixtures.snapshot(20, io.roster.client.Instance.of("10.0.0.9", 80)));
    } finally {
      lock.unlock();
    }
    sub.drainEvents();
    events.clear();
    nextAnswer = answer(Fixtures.info(DEMO, 5, "old", Fixtures.proto("10.0.0.1", 80)));
    poller.start(sub);
    clock.forward(Duration.ofSeconds(10));
    assertThat(events).isEmpty();
    assertThat(sub.snapshot().revision()).isEqualTo(20);
  }

  @Test
  void stopsWhenUnsubscribed() {
    nextAnswer = answer(Fixtures.info(DEMO, 1, "c1"));
    poller.start(sub);
    clock.forward(Duration.ofSeconds(10));
    assertThat(checksumsSent).hasSize(1);
    sub.deactivate();
    assertThat(clock.pendingCount()).isZero();
    clock.forward(Duration.ofMinutes(5));
    assertThat(checksumsSent).hasSize(1);
  }

  @Test
  void delayFormula() {
    assertThat(poller.delayNanos(0)).isEqualTo(Duration.ofSeconds(10).toNanos());
    assertThat(poller.delayNanos(1)).isEqualTo(Duration.ofSeconds(20).toNanos());
    assertThat(poller.delayNanos(100)).isEqualTo(Duration.ofSeconds(60).toNanos());
  }

  private static CompletableFuture<QueryAnswer> answer(ServiceInfo info) {
    return CompletableFuture.completedFuture(ProtoMapper.fromProto(
        QueryInstancesResponse.newBuilder().setServiceInfo(info).build()));
  }
}
