package io.roster.server.rpc;

import io.roster.proto.v1.Push;
import io.roster.proto.v1.ServerFrame;
import io.roster.server.push.PushPayload;

/**
 * The wire form of a push: the {@code ServerFrame} every subscriber of one payload receives,
 * serialised once. Public so that the JMH benchmarks measure this code, not a copy of it.
 */
public final class PushEncoder {

  private PushEncoder() {}

  /** The serialised {@code ServerFrame} carrying {@code p} as a push. */
  public static byte[] encode(PushPayload p) {
    return ServerFrame.newBuilder()
        .setPush(Push.newBuilder().setPushId(p.pushId()).setServiceInfo(ProtoMapper.toProto(p.snapshot())))
        .build().toByteArray();
  }
}
