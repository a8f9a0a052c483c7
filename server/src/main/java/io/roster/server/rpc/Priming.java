package io.roster.server.rpc;

import io.roster.proto.v1.BatchRegisterInstances;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.DeregisterInstance;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.PushAck;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegisterInstance;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.ServiceKey;
import io.roster.proto.v1.Subscribe;
import java.io.ByteArrayInputStream;
import java.util.List;

/** The Roster protocol's share of the start's priming (see {@link GrpcEndpoint#prime()}). */
final class Priming {

  private Priming() {}

  /** Decodes and maps one frame of each request kind, and encodes an answer, as a session does. */
  static void run() {
    ClientFrameMarshaller frames = new ClientFrameMarshaller(1 << 20);
    ServiceKey key = ServiceKey.newBuilder().setName("roster-primer").build();
    Instance instance = Instance.newBuilder().setIp("127.0.0.1").setPort(1).putMetadata("k", "v").build();
    List<ClientFrame> sent = List.of(
        ClientFrame.newBuilder().setRequestId("1").setHello(Hello.newBuilder().setClientId("primer")
            .addFeatures(PushEncoder.FEATURE_DELTA)).build(),
        ClientFrame.newBuilder().setRequestId("2").setSubscribe(Subscribe.newBuilder().setService(key)
            .addClusters("DEFAULT")).build(),
        ClientFrame.newBuilder().setRequestId("3").setRegister(RegisterInstance.newBuilder().setService(key)
            .setInstance(instance)).build(),
        ClientFrame.newBuilder().setRequestId("4").setBatchRegister(BatchRegisterInstances.newBuilder()
            .setService(key).addInstances(instance)).build(),
        ClientFrame.newBuilder().setRequestId("5").setQuery(QueryInstancesRequest.newBuilder().setService(key))
            .build(),
        ClientFrame.newBuilder().setPushAck(PushAck.newBuilder().setPushId("1")).build(),
        ClientFrame.newBuilder().setRequestId("6").setDeregister(DeregisterInstance.newBuilder().setService(key)
            .setInstance(instance)).build());
    for (ClientFrame f : sent) {
      ClientFrame parsed = (ClientFrame) frames.parse(new ByteArrayInputStream(f.toByteArray()));
      switch (parsed.getFrameCase()) {
        case REGISTER -> ProtoMapper.ephemeralInstance(parsed.getRegister().getInstance());
        case BATCH_REGISTER -> ProtoMapper.ephemeralInstance(parsed.getBatchRegister().getInstances(0), 0);
        case DEREGISTER -> ProtoMapper.instanceKey(parsed.getDeregister().getInstance());
        case SUBSCRIBE -> ProtoMapper.clusters(parsed.getSubscribe().getClustersList(), "subscribe.clusters");
        default -> { }
      }
      ProtoMapper.serviceKey(key, "public");
    }
    new EncodedFrame(ServerFrame.newBuilder().setRequestId("3").setResult(Result.newBuilder().setOk(true)).build()
        .toByteArray());
  }
}
