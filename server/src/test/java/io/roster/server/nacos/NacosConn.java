package io.roster.server.nacos;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import io.roster.proto.nacos.BiRequestStreamGrpc;
import io.roster.proto.nacos.Metadata;
import io.roster.proto.nacos.Payload;
import io.roster.proto.nacos.RequestGrpc;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestTime;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A hand-driven Nacos connection for protocol tests: one channel (one transport), its unary
 * calls and its stream. It acks pushes and answers {@code ClientDetectionRequest} and {@code
 * ConnectResetRequest} as the Java client does, unless told not to.
 */
final class NacosConn {

  static final Duration WAIT = TestTime.seconds(10);

  final ManagedChannel channel;
  final List<Payload> received = new CopyOnWriteArrayList<>();
  StreamObserver<Payload> stream;
  volatile boolean ackPushes = true;
  volatile boolean answerDetection = true;
  volatile boolean streamEnded;
  /** Sent as the {@code accessToken} header of every unary request, when set. */
  volatile String token;

  NacosConn(LoopbackServer server) {
    this(server.newChannel());
  }

  /** A connection on {@code channel} (one transport of its own: say, TLS with a client certificate). */
  NacosConn(ManagedChannel channel) {
    this.channel = channel;
  }

  Payload call(String type, String json) {
    Payload p = payload(type, json);
    String t = token;
    if (t != null) {
      p = p.toBuilder().setMetadata(p.getMetadata().toBuilder().putHeaders("accessToken", t)).build();
    }
    return RequestGrpc.newBlockingStub(channel).withDeadlineAfter(WAIT.toMillis(), TimeUnit.MILLISECONDS)
        .request(p);
  }

  /** The same connection's requests carry {@code token} from now on (null: none). */
  NacosConn as(String token) {
    this.token = token;
    return this;
  }

  /** Opens the stream and sends ConnectionSetupRequest; returns once SetupAckRequest arrived. */
  NacosConn setup() {
    stream = BiRequestStreamGrpc.newStub(channel).requestBiStream(new StreamObserver<>() {
      @Override
      public void onNext(Payload p) {
        received.add(p);
        String type = type(p);
        String id = Envelope.body(p).path("requestId").asText();
        if (ackPushes && type.equals("NotifySubscriberRequest")) {
          send("NotifySubscriberResponse", "{\"resultCode\":200,\"errorCode\":0,\"requestId\":\"" + id + "\"}");
        } else if (answerDetection && type.equals("ClientDetectionRequest")) {
          send("ClientDetectionResponse", "{\"resultCode\":200,\"errorCode\":0,\"requestId\":\"" + id + "\"}");
        } else if (type.equals("ConnectResetRequest")) {
          send("ConnectResetResponse", "{\"resultCode\":200,\"errorCode\":0,\"requestId\":\"" + id + "\"}");
        }
      }

      @Override
      public void onError(Throwable t) {
        streamEnded = true;
      }

      @Override
      public void onCompleted() {
        streamEnded = true;
      }
    });
    send("ConnectionSetupRequest", "{\"headers\":{},\"clientVersion\":\"Nacos-Java-Client:v2.5.1\","
        + "\"labels\":{\"source\":\"sdk\",\"module\":\"naming\",\"AppName\":\"test\"},\"abilityTable\":{},"
        + "\"module\":\"internal\"}");
    await().atMost(WAIT).until(() -> received.stream().anyMatch(p -> type(p).equals("SetupAckRequest")));
    return this;
  }

  synchronized void send(String type, String json) {
    stream.onNext(payload(type, json));
  }

  List<JsonNode> pushes() {
    return ofType("NotifySubscriberRequest");
  }

  List<JsonNode> ofType(String type) {
    return received.stream().filter(p -> type(p).equals(type)).map(Envelope::body).toList();
  }

  static Payload payload(String type, String json) {
    return Payload.newBuilder().setMetadata(Metadata.newBuilder().setType(type).setClientIp("10.9.9.9"))
        .setBody(Any.newBuilder().setValue(ByteString.copyFrom(json, StandardCharsets.UTF_8))).build();
  }

  static String type(Payload p) {
    return p.getMetadata().getType();
  }

  static String register(String service, String ip, int port) {
    return "{\"headers\":{},\"namespace\":\"public\",\"serviceName\":\"" + service + "\",\"groupName\":\"DEFAULT_GROUP\","
        + "\"type\":\"registerInstance\",\"instance\":{\"ip\":\"" + ip + "\",\"port\":" + port
        + ",\"weight\":1.0,\"healthy\":true,\"enabled\":true,\"ephemeral\":true,\"clusterName\":\"DEFAULT\","
        + "\"metadata\":{}},\"module\":\"naming\"}";
  }

  static String subscribe(String service, boolean on) {
    return "{\"headers\":{},\"namespace\":\"public\",\"serviceName\":\"" + service + "\",\"groupName\":\"DEFAULT_GROUP\","
        + "\"subscribe\":" + on + ",\"clusters\":\"\",\"module\":\"naming\"}";
  }
}
