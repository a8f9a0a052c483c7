package io.roster.server.rpc;

import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.roster.proto.v1.ClientFrame;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * Reads {@code ClientFrame}s, but not one over the frame limit: such a frame is skipped
 * unparsed and handed on as {@link Oversized}, so the session can end with
 * RESOURCE_EXHAUSTED naming the limit. (gRPC's own message limit, set higher, only cancels the
 * stream and logs a stack trace.)
 */
final class ClientFrameMarshaller implements MethodDescriptor.Marshaller<Object> {

  private static final MethodDescriptor.Marshaller<ClientFrame> PROTO =
      ProtoUtils.marshaller(ClientFrame.getDefaultInstance());

  /** A frame that was not parsed because it is larger than the limit. */
  record Oversized(long bytes) {}

  private final int maxFrameBytes;

  ClientFrameMarshaller(int maxFrameBytes) {
    this.maxFrameBytes = maxFrameBytes;
  }

  @Override
  public InputStream stream(Object value) {
    return PROTO.stream((ClientFrame) value);
  }

  @Override
  public Object parse(InputStream stream) {
    try {
      // gRPC hands over the whole message as a stream whose available() is its length.
      int size = stream.available();
      if (size > maxFrameBytes) {
        stream.skip(size);
        return new Oversized(size);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return PROTO.parse(stream);
  }
}
