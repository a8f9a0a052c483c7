package io.roster.server.rpc;

import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.QueryInstancesResponse;
import io.roster.proto.v1.Reconnect;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.SessionGrpc;
import io.roster.server.push.PushPayload;
import io.roster.server.registry.WarmUp;
import io.roster.server.session.Admission;
import io.roster.server.session.Door;
import io.roster.server.session.Session;
import io.roster.server.session.SessionManager;
import io.roster.server.stream.StreamExecutor;
import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;

/**
 * {@code roster.v1.Session/Connect}: adapts one bidirectional stream to one {@link Session}.
 *
 * <p>The method is registered with a response marshaller that also takes pre-encoded frames
 * ({@link EncodedFrame}), so a push is serialised once per revision, not once per subscriber.
 * Reflection still describes it with the generated schema.
 *
 * <p>This class is the door: whether a new stream may open (refused with UNAVAILABLE while
 * the server stops, catches up or is cut off), the set of open streams, and telling them all
 * to move or that the warm-up ended. Each stream is a {@link SessionCall} (its flow control,
 * liveness and writes); what its frames mean is {@link SessionFrames}'s.
 */
final class SessionService implements Door {

  private final Set<SessionCall> calls = ConcurrentHashMap.newKeySet();
  /** Whether new sessions are welcome; the wait for the last Connect stream once stopping. */
  private final Admission admission = new Admission(calls::isEmpty);
  private final SessionFrames frames;
  private final SessionCall.Shared shared;
  private final int maxFrameBytes;
  private final Duration silenceLimit;

  /**
   * @param queries answers a {@code query} frame given the session's namespace
   * @param warmUp told in {@code welcome}; its end is told to the sessions that heard of it
   */
  SessionService(SessionManager sessions, BiFunction<QueryInstancesRequest, String, QueryInstancesResponse> queries,
      Duration keepaliveTime, Duration keepaliveTimeout, Duration ackTimeout, Scheduler scheduler, String version,
      int maxFrameBytes, WarmUp warmUp) {
    this.frames = new SessionFrames(sessions, queries, keepaliveTime, keepaliveTimeout, ackTimeout, version,
        admission, warmUp);
    this.shared = new SessionCall.Shared(frames, sessions, scheduler, keepaliveTime, keepaliveTimeout, maxFrameBytes,
        SessionService::encodePush, calls, admission);
    this.maxFrameBytes = maxFrameBytes;
    this.silenceLimit = shared.silenceLimit();
    warmUp.onWarm(this::warmUpDone);
  }

  ServerServiceDefinition definition() {
    MethodDescriptor<Object, Object> connect = SessionGrpc.getConnectMethod().toBuilder(
        new ClientFrameMarshaller(maxFrameBytes), new EncodedFrame.Marshaller()).build();
    ServiceDescriptor descriptor = ServiceDescriptor.newBuilder(SessionGrpc.SERVICE_NAME)
        .setSchemaDescriptor(SessionGrpc.getServiceDescriptor().getSchemaDescriptor())
        .addMethod(connect)
        .build();
    return ServerServiceDefinition.builder(descriptor)
        .addMethod(connect, ServerCalls.asyncBidiStreamingCall(this::open))
        .build();
  }

  /** Sets the node id told in {@code welcome}; known once the port is bound. */
  void nodeId(String id) {
    frames.nodeId(id);
  }

  /**
   * The server is about to stop: new Connect streams (and a hello on a stream opened just before)
   * are refused with UNAVAILABLE from now on, while the sessions already here stay until {@link
   * #moveAll}. A session welcomed now would take its client's instances (its redo) only to
   * end with the server a moment later.
   */
  @Override
  public void refuseNew(String reason) {
    admission.stop(reason);
  }

  /**
   * The server is stopping: new Connect streams (and a hello on a stream opened just before)
   * are refused with UNAVAILABLE, which clients take as "try another server, or this one
   * later", and every connected client is asked to reconnect elsewhere: to the server {@code
   * suggest} names for it (a cluster spreads them over the live members), or, when it names
   * none, to the client's next server.
   */
  @Override
  public void moveAll(String reason, java.util.function.Supplier<String> suggest) {
    refuseNew(reason);
    for (SessionCall c : calls) {
      c.write(ServerFrame.newBuilder()
          .setReconnect(Reconnect.newBuilder().setReason(reason).setSuggestedServer(suggest.get())).build());
    }
    admission.connectionEnded();
  }

  /**
   * Refuses new sessions with UNAVAILABLE for now ({@code reason}), or accepts them again
   * ({@code null}): a cluster member that is catching up, or cut off from the majority.
   */
  @Override
  public void refuse(@Nullable String reason) {
    admission.refuse(reason);
  }

  /**
   * Waits until every Connect stream has ended after {@link #moveAll}, or {@code timeout}.
   *
   * @return whether they all ended in time
   */
  @Override
  public boolean awaitAllEnded(Duration timeout) throws InterruptedException {
    return admission.awaitAllEnded(timeout);
  }

  /** The warm-up ended: every session whose welcome said it was warming hears of it. */
  private void warmUpDone() {
    for (SessionCall c : calls) {
      if (c.toldWarming) {
        c.write(SessionFrames.WARM_UP_DONE);
      }
    }
  }

  int openCalls() {
    return calls.size();
  }

  private StreamObserver<Object> open(StreamObserver<Object> responseObserver) {
    ServerCallStreamObserver<Object> out = (ServerCallStreamObserver<Object>) responseObserver;
    String refused = admission.refusal();
    if (refused != null) {
      out.onError(Status.UNAVAILABLE.withDescription(refused + ": no new sessions here; connect to another server, "
          + "or to this address again once it is back").asRuntimeException());
      return new NoFrames();
    }
    // Called on the transport's event loop, which handles this stream's frames: its own executor.
    SessionCall call = new SessionCall(out, shared, StreamExecutor.current(shared.scheduler()),
        Connections.remoteAddress(), Connections.scope(), Connections.peerCertificates());
    out.disableAutoRequest();
    out.setOnReadyHandler(call::onReady);
    out.setOnCancelHandler(() -> call.end("cancelled"));
    calls.add(call);
    out.request(1);
    call.watchSilence(silenceLimit);
    return call;
  }

  /** The warm-up left, in whole milliseconds rounded up (a warming server never says 0). */
  static long warmUpMillis(WarmUp warmUp) {
    long nanos = warmUp.remaining().toNanos();
    return nanos <= 0 ? 0 : (nanos + 999_999) / 1_000_000;
  }

  static Object encodePush(PushPayload p) {
    return new EncodedFrame(PushEncoder.encode(p));
  }

  /** The inbound side of a stream refused at once: whatever still arrives is dropped. */
  private static final class NoFrames implements StreamObserver<Object> {
    @Override
    public void onNext(Object value) {}

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onCompleted() {}
  }
}
