package io.roster.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An event stream to a client that reads slowly: events of one key that wait to be written are
 * replaced by the latest (in their place), others are kept in order, and a client that falls
 * {@link EventSink#MAX_QUEUED} events behind has its stream ended.
 */
class EventSinkTest {

  private final ScheduledExecutorScheduler scheduler = new ScheduledExecutorScheduler("event-sink-test", true);
  /** Each write the sink started, and the callback that completes it (held: the client is slow). */
  private final List<String> written = new ArrayList<>();
  private final List<Callback> pending = new ArrayList<>();
  private final List<Throwable> ended = new ArrayList<>();

  private final Response response = (Response) Proxy.newProxyInstance(Response.class.getClassLoader(),
      new Class<?>[] {Response.class}, (proxy, method, args) -> {
        if (method.getName().equals("write")) {
          ByteBuffer b = (ByteBuffer) args[1];
          written.add(b == null ? "<end>" : StandardCharsets.UTF_8.decode(b.duplicate()).toString());
          pending.add((Callback) args[2]);
          return null;
        }
        throw new UnsupportedOperationException(method.getName());
      });

  private final EventSink sink = new EventSink(response, Callback.from(() -> { }, ended::add), scheduler);

  EventSinkTest() throws Exception {
    scheduler.start();
  }

  @AfterEach
  void stop() throws Exception {
    scheduler.stop();
  }

  private void clientReadsOne() {
    pending.remove(0).succeeded();
  }

  @Test
  void waitingEventsOfOneKeyAreReplacedByTheLatestInTheirPlace() {
    sink.start(); // writes its first ping, which the client has not read yet
    for (int i = 1; i <= 100; i++) {
      sink.send("service", "orders rev " + i, "orders");
    }
    sink.send("drain", "drain-1 started", null);
    sink.send("service", "billing rev 1", "billing");
    sink.send("service", "orders rev 101", "orders");
    for (int i = 0; i < 4; i++) {
      clientReadsOne();
    }
    assertThat(written).containsExactly(": ping\n\n", "event: service\ndata: orders rev 101\n\n",
        "event: drain\ndata: drain-1 started\n\n", "event: service\ndata: billing rev 1\n\n");
    // Once taken for writing an event stays as it was; a new one of its key goes to the end.
    sink.send("service", "orders rev 102", "orders");
    clientReadsOne();
    assertThat(written).last().isEqualTo("event: service\ndata: orders rev 102\n\n");
    assertThat(ended).isEmpty();
  }

  @Test
  void aClientThatFallsTooFarBehindHasItsStreamEnded() {
    sink.start();
    for (int i = 0; i < EventSink.MAX_QUEUED; i++) {
      assertThat(sink.send("service", "s" + i, "s" + i)).isTrue();
    }
    assertThat(sink.send("service", "one too many", "another")).isFalse();
    assertThat(ended).hasSize(1);
    assertThat(sink.isOpen()).isFalse();
    assertThat(sink.send("service", "after", null)).isFalse();
  }
}
