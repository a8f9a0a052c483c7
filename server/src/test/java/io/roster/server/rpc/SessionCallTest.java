package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.QueryInstancesResponse;
import io.roster.proto.v1.RegisterInstance;
import io.roster.proto.v1.ServerFrame;
import io.roster.server.model.ServiceKey;
import io.roster.server.push.PushEngine;
import io.roster.server.registry.Command;
import io.roster.server.registry.Registry;
import io.roster.server.registry.WarmUp;
import io.roster.server.registry.Writer;
import io.roster.server.session.Admission;
import io.roster.server.session.SessionLimits;
import io.roster.server.session.SessionManager;
import io.roster.server.stream.StreamExecutor;
import io.roster.server.testing.FakeServerStream;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import io.roster.server.time.FakeScheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A Connect stream's answers to changes that wait for the log (decision 94): the thread that
 * completes the writer's future (a cluster's apply thread) never writes to the stream; the
 * answers are written on the stream's own executor, in the order of the frames.
 */
class SessionCallTest {

  private static final String SESSION_THREAD = "session-executor";
  private static final String APPLY_THREAD = "apply";

  private final FakeScheduler scheduler = new FakeScheduler();
  private final Registry registry = new Registry(() -> 1L);
  /** A cluster's writer, by hand: each change waits until {@link #applyHeld} applies it. */
  private final BlockingQueue<Runnable> held = new LinkedBlockingQueue<>();
  private final Writer writer = new Writer() {
    @Override
    public <R> CompletableFuture<R> submit(Command<R> command) {
      CompletableFuture<R> applied = new CompletableFuture<>();
      held.add(() -> applied.complete(command.applyTo(registry)));
      return applied;
    }
  };
  private final SessionManager sessions = new SessionManager(registry, writer,
      new PushEngine(registry, scheduler, Duration.ZERO), scheduler, Duration.ofSeconds(3), SessionLimits.of(100, 100));
  private final ExecutorService sessionThread =
      Executors.newSingleThreadExecutor(r -> new Thread(r, SESSION_THREAD));
  private final FakeServerStream<Object> out = new FakeServerStream<>();
  private final SessionCall call = newCall();

  private SessionCall newCall() {
    Admission admission = new Admission(() -> true);
    SessionFrames frames = new SessionFrames(sessions, (q, namespace) -> QueryInstancesResponse.getDefaultInstance(),
        Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofSeconds(3), "test", admission,
        WarmUp.warm(scheduler));
    SessionCall.Shared shared = new SessionCall.Shared(frames, sessions, scheduler, Duration.ofSeconds(5),
        Duration.ofSeconds(5), 1 << 20, SessionService::encodePush, ConcurrentHashMap.newKeySet(), admission);
    return new SessionCall(out, shared, StreamExecutor.of(sessionThread), "127.0.0.1:40000",
        sessions.openConnection("127.0.0.1"), List.of());
  }

  @AfterEach
  void stop() throws InterruptedException {
    sessionThread.shutdownNow();
    assertThat(sessionThread.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  /** Hands {@code frame} to the stream as the transport would: on the stream's own thread. */
  private void receive(ClientFrame frame) throws Exception {
    sessionThread.submit(() -> call.onNext(frame)).get(10, TimeUnit.SECONDS);
  }

  /** Applies every held change, in order, on a thread of the log's own. */
  private void applyHeld() throws InterruptedException {
    Thread apply = new Thread(() -> {
      for (Runnable r; (r = held.poll()) != null; ) {
        r.run();
      }
    }, APPLY_THREAD);
    apply.start();
    apply.join(TimeUnit.SECONDS.toMillis(10));
    assertThat(apply.isAlive()).isFalse();
  }

  private static ClientFrame register(String requestId, int port) {
    return ClientFrame.newBuilder().setRequestId(requestId).setRegister(RegisterInstance.newBuilder()
        .setService(TestSession.key("orders")).setInstance(Instance.newBuilder().setIp("10.0.0.1").setPort(port)))
        .build();
  }

  private List<FakeServerStream.Written<Object>> results() {
    return out.written().stream().filter(w -> ((ServerFrame) w.message()).hasResult()).toList();
  }

  @Test
  void answersThatWaitedForTheLogAreWrittenOnTheStreamsExecutorInTheFramesOrder() throws Exception {
    receive(ClientFrame.newBuilder().setRequestId("h").setHello(Hello.newBuilder().setClientId("provider")).build());
    assertThat(((ServerFrame) out.messages().get(0)).hasWelcome()).isTrue();
    receive(register("r1", 8080));
    receive(register("r2", 8081));
    receive(register("r3", 8082));
    assertThat(results()).as("nothing answered before the log applied it").isEmpty();

    applyHeld();

    await().atMost(TestTime.seconds(10)).until(() -> results().size() == 3);
    assertThat(results()).extracting(FakeServerStream.Written::thread).containsOnly(SESSION_THREAD);
    assertThat(results()).extracting(w -> ((ServerFrame) w.message()).getRequestId()).containsExactly("r1", "r2", "r3");
    assertThat(results()).allSatisfy(w -> assertThat(((ServerFrame) w.message()).getResult().getOk()).isTrue());
    assertThat(registry.snapshot(ServiceKey.of("public", "DEFAULT_GROUP", "orders")).instances()).hasSize(3);
    assertThat(out.overlapped()).isFalse();
  }

  @Test
  void aStreamPausedForTheLogReadsOnFromItsOwnExecutorOnceAnAnswerIsWritten() throws Exception {
    receive(ClientFrame.newBuilder().setRequestId("h").setHello(Hello.newBuilder().setClientId("provider")).build());
    for (int i = 0; i < SessionCall.MAX_WRITES_IN_FLIGHT; i++) {
      receive(register("r" + i, 1000 + i));
    }
    scheduler.runDue(); // the reads handed back to the event loop's queue (FRAMES_PER_TURN)
    int requested = out.requested();
    scheduler.runDue();
    assertThat(out.requested()).as("no further frame asked for while the log is behind").isEqualTo(requested);

    applyHeld();

    await().atMost(TestTime.seconds(10)).until(() -> results().size() == SessionCall.MAX_WRITES_IN_FLIGHT);
    await().atMost(TestTime.seconds(10)).until(() -> {
      scheduler.runDue();
      return out.requested() > requested;
    });
    assertThat(results()).extracting(FakeServerStream.Written::thread).containsOnly(SESSION_THREAD);
  }
}
