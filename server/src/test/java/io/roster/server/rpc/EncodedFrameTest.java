package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.roster.proto.v1.Pong;
import io.roster.proto.v1.ServerFrame;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import org.junit.jupiter.api.Test;

class EncodedFrameTest {

  private final EncodedFrame.Marshaller marshaller = new EncodedFrame.Marshaller();
  private final ServerFrame frame = ServerFrame.newBuilder().setRequestId("r-1").setPong(Pong.getDefaultInstance()).build();

  @Test
  void encodedFrameDrainsItsBytesOnceWithoutACopyBuffer() throws Exception {
    InputStream in = marshaller.stream(new EncodedFrame(frame));
    assertThat(in).isInstanceOf(Drainable.class).isInstanceOf(KnownLength.class);
    assertThat(in.available()).isEqualTo(frame.getSerializedSize());

    ByteArrayOutputStream out = new ByteArrayOutputStream();
    assertThat(((Drainable) in).drainTo(out)).isEqualTo(frame.getSerializedSize());
    assertThat(ServerFrame.parseFrom(out.toByteArray())).isEqualTo(frame);
    assertThat(((Drainable) in).drainTo(out)).isZero();
    assertThat(in.available()).isZero();
  }

  @Test
  void plainFramesRoundTrip() {
    assertThat(marshaller.parse(marshaller.stream(frame))).isEqualTo(frame);
    assertThat(marshaller.parse(marshaller.stream(new EncodedFrame(frame)))).isEqualTo(frame);
  }
}
