package io.roster.server.rpc;

import io.roster.proto.v1.Push;
import io.roster.proto.v1.ServerFrame;
import io.roster.server.push.PushPayload;

/**
 * The wire form of a push: the {@code ServerFrame} every subscriber of one payload receives,
 * serialised once. Public so that the JMH benchmarks measure this code, not a copy of it.
 */
public final class PushEncoder {

  /**
   * The hello and welcome feature of delta pushes: a client that lists it applies pushes that
   * carry a {@code delta}; a server that lists it may send them (docs/decisions.md, record 22).
   */
  public static final String FEATURE_DELTA = "delta";

  private PushEncoder() {}

  /** The serialised {@code ServerFrame} carrying {@code p} as a push, in full or as its delta. */
  public static byte[] encode(PushPayload p) {
    Push.Builder push = Push.newBuilder().setPushId(p.pushId());
    if (p.delta() != null) {
      push.setDelta(ProtoMapper.toProto(p.delta()));
    } else {
      push.setServiceInfo(ProtoMapper.toProto(p.snapshot()));
    }
    return ServerFrame.newBuilder().setPush(push).build().toByteArray();
  }
}
