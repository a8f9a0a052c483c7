package io.roster.server.rpc;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.roster.proto.v1.ServerFrame;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * A server frame serialised once and written to many streams: a push of one revision goes
 * to every subscriber as the same bytes. The Connect method's response marshaller accepts
 * either an {@code EncodedFrame} or a plain {@link ServerFrame}.
 */
final class EncodedFrame {

  private final byte[] bytes;

  EncodedFrame(ServerFrame frame) {
    this(frame.toByteArray());
  }

  /** @param bytes a serialised {@link ServerFrame}, never modified afterwards */
  EncodedFrame(byte[] bytes) {
    this.bytes = bytes;
  }

  int size() {
    return bytes.length;
  }

  /** Marshals {@link EncodedFrame} as its bytes and {@link ServerFrame} as usual. */
  static final class Marshaller implements MethodDescriptor.Marshaller<Object> {
    private static final MethodDescriptor.Marshaller<ServerFrame> PROTO =
        ProtoUtils.marshaller(ServerFrame.getDefaultInstance());

    @Override
    public InputStream stream(Object value) {
      if (value instanceof EncodedFrame e) {
        return new KnownLengthStream(e.bytes);
      }
      return PROTO.stream((ServerFrame) value);
    }

    @Override
    public Object parse(InputStream stream) {
      return PROTO.parse(stream);
    }
  }

  /**
   * Drainable lets gRPC's framer write the bytes straight into its buffer; a plain stream is
   * copied through a fresh 8 KB array per message, which for one push to 1,000 subscribers
   * is 8 MB of garbage.
   */
  private static final class KnownLengthStream extends ByteArrayInputStream implements KnownLength, Drainable {
    KnownLengthStream(byte[] bytes) {
      super(bytes);
    }

    @Override
    public synchronized int drainTo(OutputStream target) throws IOException {
      int n = count - pos;
      target.write(buf, pos, n);
      pos = count;
      return n;
    }
  }
}
