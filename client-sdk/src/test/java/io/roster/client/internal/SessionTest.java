package io.roster.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Ping;
import io.roster.proto.v1.Result;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Request timeouts of one session, on a fake clock. */
class SessionTest {

  private final FakeClock clock = new FakeClock();
  private final AtomicInteger ids = new AtomicInteger();
  private final Session session = new Session(1, ServerAddress.parse("a:1"), clock.scheduler(),
      () -> "r" + ids.incrementAndGet(), clock);

  SessionTest() {
    session.attach(new FakeConnector.FakeStream(session.address, null));
  }

  private CompletableFuture<Result> request(Duration timeout) {
    return session.request(ClientFrame.newBuilder().setPing(Ping.getDefaultInstance()), timeout);
  }

  /** The failure of a completed future (Java 17 has no exceptionNow). */
  private static Throwable cause(CompletableFuture<Result> f) {
    assertThat(f).isDone();
    return f.handle((r, e) -> e).join();
  }

  @Test
  void eachRequestTimesOutAtItsOwnDeadlineWithOneTimerForAll() {
    CompletableFuture<Result> slow = request(Duration.ofSeconds(5));
    CompletableFuture<Result> fast = request(Duration.ofSeconds(1)); // earlier: the timer moves
    CompletableFuture<Result> answered = request(Duration.ofSeconds(5));
    CompletableFuture<Result> late = request(Duration.ofSeconds(5));
    assertThat(clock.pendingCount()).as("one timer; the replaced one is cancelled").isEqualTo(1);

    clock.forward(Duration.ofMillis(999));
    assertThat(fast).isNotDone();
    clock.forward(Duration.ofMillis(1));
    assertThat(fast).isCompletedExceptionally();
    assertThat(cause(fast)).isInstanceOf(TimeoutException.class).hasMessageContaining("within 1000 ms");
    assertThat(slow).isNotDone();

    session.complete("r3", Result.newBuilder().setOk(true).build());
    assertThat(answered.join().getOk()).isTrue();

    clock.forward(Duration.ofMillis(3999));
    assertThat(slow).isNotDone();
    assertThat(late).isNotDone();
    clock.forward(Duration.ofMillis(1));
    assertThat(cause(slow)).isInstanceOf(TimeoutException.class);
    assertThat(cause(late)).isInstanceOf(TimeoutException.class);
    assertThat(clock.pendingDelays()).as("nothing left to expire, no timer").isEmpty();
  }

  @Test
  void aRequestAfterTheTimerFiredGetsItsOwnTimer() {
    request(Duration.ofSeconds(1));
    clock.forward(Duration.ofSeconds(1));
    CompletableFuture<Result> next = request(Duration.ofSeconds(2));
    clock.forward(Duration.ofMillis(1999));
    assertThat(next).isNotDone();
    clock.forward(Duration.ofMillis(1));
    assertThat(cause(next)).isInstanceOf(TimeoutException.class);
  }

  @Test
  void anEndedSessionFailsItsRequestsAndLeavesNoTimer() {
    CompletableFuture<Result> waiting = request(Duration.ofSeconds(5));
    session.ended(new Session.SessionLostException("gone"));
    assertThat(cause(waiting)).isInstanceOf(Session.SessionLostException.class);
    assertThat(clock.pendingDelays()).isEmpty();
    assertThat(cause(request(Duration.ofSeconds(5)))).isInstanceOf(Session.SessionLostException.class);
  }
}
