package io.roster.server.rpc;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Reconnect;
import io.roster.proto.v1.ServerFrame;
import io.roster.server.model.RegistryException;
import io.roster.server.naming.LogText;
import io.roster.server.push.Outbound;
import io.roster.server.push.PushPayload;
import io.roster.server.session.Admission;
import io.roster.server.session.Scope;
import io.roster.server.session.Session;
import io.roster.server.session.SessionManager;
import io.roster.server.stream.StreamWriter;
import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code roster.v1.Session/Connect} stream, adapted to one {@link Session}: owns the stream's
 * inbound flow control, its liveness rule and its writes (through a {@link StreamWriter}); what
 * each frame means is {@link SessionFrames}'s.
 *
 * <p>Inbound flow control is manual: the next client frame is requested only while the outbound
 * side is ready, and while fewer than {@link #MAX_WRITES_IN_FLIGHT} of its changes wait for the
 * cluster's log, so a client that writes but never reads cannot make the server buffer answers
 * without bound.
 *
 * <p>Frames arrive one at a time on the stream's own executor (the transport's event loop). An
 * answer that waits for the cluster's log is written there too, never by the thread that
 * completes the wait (decision 94). Other writes may come from any thread (a push, a move, the
 * warm-up's end); they go out in the order they take the writer's lock.
 */
final class SessionCall implements StreamObserver<Object>, Outbound {

  /** Logged under the service's name, as the stream's lines always were. */
  private static final Logger log = LoggerFactory.getLogger(SessionService.class);
  /**
   * Frames handled in a row for one stream before the next read is handed back to the event
   * loop's queue: a client flooding its stream then costs other connections on the same event
   * loop at most this many frames' work (~0.5 ms) between their own reads and timers.
   */
  static final int FRAMES_PER_TURN = 32;
  /**
   * Changes one stream may have waiting for the cluster's log; its next frame is read once
   * fewer are (flow control back to the client). A standalone server answers at once.
   */
  static final int MAX_WRITES_IN_FLIGHT = 64;

  /**
   * What every stream of one service shares.
   *
   * @param calls the service's open streams: a stream leaves it as it ends
   * @param admission told when a stream ended, for the stop's wait
   * @param encoder a push's encoding for this protocol, one per revision
   */
  record Shared(SessionFrames frames, SessionManager sessions, Scheduler scheduler, Duration keepaliveTime,
      Duration keepaliveTimeout, int maxFrameBytes, Function<PushPayload, Object> encoder, Set<SessionCall> calls,
      Admission admission) {

    /** How long a stream may be silent: keepalive time + keepalive timeout. */
    Duration silenceLimit() {
      return keepaliveTime.plus(keepaliveTimeout);
    }
  }

  private final ServerCallStreamObserver<Object> out;
  private final Shared shared;
  private final Scheduler scheduler;
  private final Duration silenceLimit;
  /** Where the stream's frames are handled, and its answers that waited are written. */
  private final Executor executor;
  final String remoteAddress;
  final Scope scope;
  /** The client certificate this stream's connection verified: an identity when the hello has no token. */
  final List<java.security.cert.X509Certificate> peerCertificates;
  /** Frames handled since the stream last gave its turn back to the event loop. */
  private int framesThisTurn;
  /** Every write to the stream, and whether it ended. */
  private final StreamWriter<Object> writer;
  /** Guards the inbound flow control below; taken before the writer's lock, never after. */
  private final Object flow = new Object();
  private volatile @Nullable Session session;
  /** Its welcome said the server was warming up; set after the welcome was written. */
  volatile boolean toldWarming;
  private boolean wantsNext;   // guarded by flow
  /** Changes submitted and not yet answered (a cluster member waits for the log). */
  private int writesInFlight;  // guarded by flow
  /** Reading stopped until fewer than MAX_WRITES_IN_FLIGHT changes are in flight. */
  private boolean pausedForWrites; // guarded by flow
  /** When the last client frame arrived, or reading resumed after a pause of ours. */
  private volatile long lastHeardNanos;

  /**
   * @param executor the stream's own serial executor: the thread its frames are handled on
   * @param remoteAddress the client's {@code host:port}
   * @param scope the client connection's scope (its limits)
   * @param peerCertificates the client certificate its connection verified, leaf first; empty for none
   */
  SessionCall(ServerCallStreamObserver<Object> out, Shared shared, Executor executor, String remoteAddress,
      Scope scope, List<java.security.cert.X509Certificate> peerCertificates) {
    this.out = out;
    this.shared = shared;
    this.executor = executor;
    this.remoteAddress = remoteAddress;
    this.scope = scope;
    this.peerCertificates = peerCertificates;
    this.scheduler = shared.scheduler();
    this.silenceLimit = shared.silenceLimit();
    this.writer = new StreamWriter<>(out);
    this.lastHeardNanos = scheduler.nanoTime();
  }

  /** The stream's session, once its hello opened one. */
  @Nullable Session session() {
    return session;
  }

  /**
   * The hello opened {@code s} for this stream.
   *
   * @return false when the stream ended meanwhile: the caller closes {@code s}, which nothing may outlive
   */
  boolean opened(Session s) {
    session = s;
    return !writer.ended();
  }

  /**
   * Application-level liveness. A client must send some frame (ping, when it has nothing
   * else) at least every keepalive_time; a stream silent for keepalive_time +
   * keepalive_timeout is ended as a dead peer. HTTP/2 keepalive would do this too, but gRPC
   * Java will not ping more often than every 10 s, which puts a frozen peer's removal at
   * ~15 s instead of ~10 s. While we ourselves stop reading (the client is not reading our
   * frames), silence is not held against it; HTTP/2 keepalive still covers that case.
   */
  void watchSilence(Duration delay) {
    scheduler.schedule(this::checkSilence, delay);
  }

  private void checkSilence() {
    boolean paused;
    synchronized (flow) {
      if (writer.ended()) {
        return;
      }
      paused = wantsNext || pausedForWrites;
    }
    long silentNanos = scheduler.nanoTime() - lastHeardNanos;
    if (paused || silentNanos < silenceLimit.toNanos()) {
      watchSilence(paused ? silenceLimit : silenceLimit.minusNanos(silentNanos));
      return;
    }
    String why = "no frame from the client for " + silenceLimit.toMillis() + " ms (keepalive_time_ms "
        + shared.keepaliveTime().toMillis() + " + keepalive_timeout_ms " + shared.keepaliveTimeout().toMillis()
        + "); a client must send ping when it has nothing else to say";
    end("silent peer");
    writer.fail(Status.UNAVAILABLE.withDescription(why));
  }

  @Override
  public void onNext(Object message) {
    lastHeardNanos = scheduler.nanoTime();
    if (message instanceof ClientFrameMarshaller.Oversized big) {
      log.warn("Session frame of {} bytes from {} refused: over the limit of {} bytes (--max-message-size)",
          big.bytes(), LogText.of(remoteAddress), shared.maxFrameBytes());
      violate(Status.RESOURCE_EXHAUSTED.withDescription("frame of " + big.bytes() + " bytes is over the limit of "
          + shared.maxFrameBytes() + " bytes (--max-message-size); the stream is ended"));
      return;
    }
    try {
      shared.frames().handle(this, (ClientFrame) message);
    } catch (SessionFrames.ProtocolViolation v) {
      violate(v.status);
      return;
    }
    synchronized (flow) {
      if (writesInFlight >= MAX_WRITES_IN_FLIGHT) {
        // The next frame is read once the log has taken some of these (writeAnswered).
        pausedForWrites = true;
        return;
      }
    }
    requestNext();
  }

  /**
   * Runs {@code then} once {@code applied} completes: at once when it has; else, when it does,
   * on this stream's executor, never on the thread that completed it (a cluster member's is
   * Ratis's apply thread, decision 94), counted meanwhile against {@link #MAX_WRITES_IN_FLIGHT}.
   * Runs handed over go in the order their futures complete (a writer completes a stream's
   * changes in the order they were submitted), so answers keep the order of the frames.
   */
  void whenApplied(CompletableFuture<?> applied, Runnable then) {
    if (applied.isDone()) {
      then.run();
      return;
    }
    synchronized (flow) {
      writesInFlight++;
    }
    applied.whenComplete((done, failed) -> executor.execute(() -> {
      then.run();
      writeAnswered();
    }));
  }

  /**
   * Runs {@code then} with {@code result}'s outcome: at once when it has one; else, when it
   * does, on this stream's executor (a drain's answer, which may complete on the apply thread).
   */
  <T> void whenDone(CompletableFuture<T> result, BiConsumer<? super T, ? super Throwable> then) {
    if (result.isDone()) {
      result.whenComplete(then);
      return;
    }
    result.whenComplete((value, failed) -> executor.execute(() -> then.accept(value, failed)));
  }

  private void writeAnswered() {
    boolean resume;
    synchronized (flow) {
      writesInFlight--;
      resume = pausedForWrites && writesInFlight < MAX_WRITES_IN_FLIGHT;
      if (resume) {
        pausedForWrites = false;
      }
    }
    if (resume) {
      lastHeardNanos = scheduler.nanoTime();
      requestNext();
    }
  }

  @Override
  public void onError(Throwable t) {
    end("transport: " + Status.fromThrowable(t).getCode());
  }

  @Override
  public void onCompleted() {
    end("goodbye");
    writer.complete();
  }

  // --- Outbound, for the session's PushQueue ---

  @Override
  public boolean move(String reason, String suggestedServer) {
    write(ServerFrame.newBuilder().setReconnect(Reconnect.newBuilder().setReason(reason)
        .setSuggestedServer(suggestedServer)).build());
    return true;
  }

  @Override
  public boolean end(RegistryException why) {
    violate(Errors.status(why));
    return true;
  }

  @Override
  public boolean isReady() {
    return writer.isReady();
  }

  @Override
  public int send(PushPayload payload) {
    EncodedFrame frame = (EncodedFrame) payload.encoded(shared.encoder());
    write(frame);
    return frame.size();
  }

  void onReady() {
    Session s = session;
    if (s != null) {
      s.onReady();
    }
    boolean request;
    synchronized (flow) {
      request = wantsNext && !writer.ended();
      wantsNext = false;
    }
    if (request) {
      lastHeardNanos = scheduler.nanoTime();
      out.request(1);
    }
  }

  private void requestNext() {
    boolean request;
    synchronized (flow) {
      request = writer.isReady();
      wantsNext = !writer.ended() && !request;
    }
    if (!request) {
      return;
    }
    if (++framesThisTurn < FRAMES_PER_TURN) {
      // Delivered at once from what gRPC has buffered, still on this event-loop task.
      out.request(1);
    } else {
      // Asked from another thread, the request joins the back of the event loop's queue:
      // other connections' reads, pings and pushes go first.
      framesThisTurn = 0;
      scheduler.execute(() -> out.request(1));
    }
  }

  /** Writes one frame; a no-op once the stream ended (or was cancelled under us: its cancel handler ends the session). */
  void write(Object message) {
    writer.write(message);
  }

  private void violate(Status status) {
    end("protocol violation: " + status.getDescription());
    writer.fail(status);
  }

  /** Ends the session once, whatever ended the stream. */
  void end(String reason) {
    writer.end();
    shared.calls().remove(this);
    Session s = session;
    if (s != null) {
      SessionManager sessions = shared.sessions();
      Session.CloseSummary summary = sessions.close(s);
      if (summary != null) {
        log.info("Session closed: conn={} client={} reason={} removed instances={} subscriptions={} sessions={}",
            s.info().connectionId(), LogText.of(s.info().clientId()), LogText.of(reason), summary.instances(),
            summary.subscriptions(), sessions.count());
      }
    }
    shared.admission().connectionEnded();
  }
}
