package io.roster.server.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.roster.server.testing.FakeServerStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The write guard's contract, on a stream without a transport. */
class StreamWriterTest {

  private final FakeServerStream<String> out = new FakeServerStream<>();
  private final StreamWriter<String> writer = new StreamWriter<>(out);

  @Test
  void messagesGoOutInTheOrderTheyWereWritten() {
    assertThat(writer.write("a")).isTrue();
    assertThat(writer.write("b")).isTrue();
    assertThat(writer.write("c")).isTrue();
    assertThat(out.messages()).containsExactly("a", "b", "c");
    assertThat(out.closes()).isEmpty();
  }

  @Test
  void nothingIsWrittenOnceEndedButTheCloseStillGoesOutOnce() {
    writer.write("before");
    assertThat(writer.end()).isTrue();
    assertThat(writer.end()).isFalse();

    assertThat(writer.write("after")).isFalse();
    assertThat(writer.ended()).isTrue();
    assertThat(writer.fail(Status.UNAVAILABLE.withDescription("why"))).isTrue();
    assertThat(writer.complete()).isFalse();
    assertThat(writer.fail(Status.INTERNAL)).isFalse();

    assertThat(out.messages()).containsExactly("before");
    assertThat(out.closes()).extracting(Status::getCode).containsExactly(Status.Code.UNAVAILABLE);
    assertThat(out.closes().get(0).getDescription()).isEqualTo("why");
  }

  @Test
  void aCompletedStreamTakesNoMoreMessages() {
    assertThat(writer.complete()).isTrue();
    assertThat(writer.write("late")).isFalse();
    assertThat(out.messages()).isEmpty();
    assertThat(out.closes()).containsExactly(Status.OK);
  }

  @Test
  void aWriteRefusedBecauseTheCallWasCancelledEndsTheStream() {
    writer.write("a");
    out.cancel();
    assertThat(writer.write("b")).isFalse();
    assertThat(writer.ended()).isTrue();
    assertThat(out.messages()).containsExactly("a");
  }

  @Test
  void readinessFollowsTheTransportUntilTheStreamEndsOrIsCancelled() {
    assertThat(writer.isReady()).isTrue();
    out.ready(false);
    assertThat(writer.isReady()).isFalse();
    // Not ready is flow control, not a refusal: the message is buffered by the transport.
    assertThat(writer.write("buffered")).isTrue();
    out.ready(true);
    assertThat(writer.isReady()).isTrue();

    writer.end();
    assertThat(writer.isReady()).isFalse();

    FakeServerStream<String> other = new FakeServerStream<>();
    StreamWriter<String> cancelled = new StreamWriter<>(other);
    other.cancel();
    assertThat(cancelled.isReady()).isFalse();
    assertThat(cancelled.ended()).isFalse(); // until its cancel handler, or a write, ends it
  }

  @Test
  void concurrentWritersNeverOverlapAndEachKeepsItsOwnOrder() throws Exception {
    int threads = 4;
    int each = 2_000;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        String name = "w" + t;
        done.add(pool.submit(() -> {
          start.await();
          for (int i = 0; i < each; i++) {
            writer.write(name + ":" + i);
          }
          return null;
        }));
      }
      start.countDown();
      for (Future<?> f : done) {
        f.get(30, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(out.overlapped()).isFalse();
    List<String> messages = out.messages();
    assertThat(messages).hasSize(threads * each);
    for (int t = 0; t < threads; t++) {
      String prefix = "w" + t + ":";
      List<Integer> own = messages.stream().filter(m -> m.startsWith(prefix))
          .map(m -> Integer.parseInt(m.substring(prefix.length()))).toList();
      assertThat(own).isSorted().hasSize(each);
    }
  }

  @Test
  void aCloseRacingWritesLeavesNothingWrittenAfterIt() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      CountDownLatch start = new CountDownLatch(1);
      Future<?> writes = pool.submit(() -> {
        start.await();
        for (int i = 0; i < 10_000 && writer.write("m" + i); i++) {
          // keep writing until the close ends the stream
        }
        return null;
      });
      Future<?> close = pool.submit(() -> {
        start.await();
        writer.fail(Status.CANCELLED);
        return null;
      });
      start.countDown();
      close.get(30, TimeUnit.SECONDS);
      writes.get(30, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    int before = out.messages().size();
    assertThat(writer.write("after")).isFalse();
    assertThat(out.messages()).hasSize(before);
    assertThat(out.closes()).containsExactly(Status.CANCELLED);
  }
}
