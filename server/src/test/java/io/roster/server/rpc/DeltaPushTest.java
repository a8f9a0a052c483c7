package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.proto.v1.BatchRegisterInstances;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.InstanceIdentity;
import io.roster.proto.v1.PushAck;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.ServiceDelta;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Delta pushes over real loopback sockets, seen by raw Connect streams: a client that lists
 * "delta" in its hello gets one change to a large service as a delta against the state it
 * acked, costing bytes in proportion to the change; a client that does not list it, and a
 * client that cannot apply a delta, get the full state.
 */
class DeltaPushTest {

  private static final int SIZE = 2000;

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.with(b -> b.shutdownGrace(Duration.ofSeconds(1)));

  /** A session on a connection of its own. */
  private TestSession session(String clientId, boolean deltas) {
    TestSession s = loopback.open(loopback.newChannel());
    Hello.Builder hello = Hello.newBuilder().setClientId(clientId);
    if (deltas) {
      hello.addFeatures("delta");
    }
    ServerFrame welcome = s.helloFrame(hello);
    assertThat(welcome.getWelcome().getFeaturesList()).contains("query", "delta");
    return s;
  }

  private static Instance instance(int i) {
    return Instance.newBuilder().setIp("10.1." + (i / 250) + "." + (i % 250)).setPort(8080)
        .putMetadata("zone", "zone-" + (i % 3)).putMetadata("version", "1.4." + (i % 7)).build();
  }

  private static BatchRegisterInstances.Builder batch(int from, int to) {
    BatchRegisterInstances.Builder b = BatchRegisterInstances.newBuilder().setService(TestSession.key("big"));
    for (int i = from; i < to; i++) {
      b.addInstances(instance(i));
    }
    return b;
  }

  private ServerFrame nextPush(TestSession s) {
    return s.await(ServerFrame::hasPush);
  }

  @Test
  void oneChangeToALargeServiceIsADeltaProportionalToTheChange() {
    TestSession provider = session("provider", false);
    assertThat(provider.request(ClientFrame.newBuilder().setBatchRegister(batch(0, SIZE))).getOk()).isTrue();
    TestSession subscriber = session("subscriber", true);
    TestSession old = session("old-client", false);
    subscriber.subscribe("big");
    old.subscribe("big");
    ServerFrame first = nextPush(subscriber);
    assertThat(first.getPush().getServiceInfo().getInstancesCount()).isEqualTo(SIZE);
    assertThat(nextPush(old).getPush().hasServiceInfo()).isTrue();
    subscriber.ping(); // the ack of the first push is in before the change
    int fullBytes = first.getSerializedSize();

    // One change: another instance, the same revision for both subscribers.
    assertThat(provider.register("big", "10.9.9.9", 9090).getOk()).isTrue();
    ServerFrame second = nextPush(subscriber);
    assertThat(second.getPush().getStateCase()).isEqualTo(io.roster.proto.v1.Push.StateCase.DELTA);
    ServiceDelta delta = second.getPush().getDelta();
    assertThat(delta.getBaseRevision()).isEqualTo(first.getPush().getServiceInfo().getRevision());
    assertThat(delta.getUpsertedList()).extracting(Instance::getIp).containsExactly("10.9.9.9");
    assertThat(delta.getRemovedList()).isEmpty();
    assertThat(second.getPush().getPushId()).isEqualTo(Long.toHexString(delta.getRevision()));
    assertThat(second.getSerializedSize()).as("bytes of one change, not of %d instances", SIZE)
        .isLessThan(fullBytes / 100);

    ServerFrame full = nextPush(old);
    assertThat(full.getPush().getServiceInfo().getInstancesCount()).isEqualTo(SIZE + 1);
    assertThat(full.getPush().getServiceInfo().getChecksum()).isEqualTo(delta.getChecksum());
    assertThat(full.getPush().getServiceInfo().getRevision()).isEqualTo(delta.getRevision());

    // Removals are identities (the batch drops the first instance and the registered one).
    provider.ping();
    subscriber.ping();
    assertThat(provider.request(ClientFrame.newBuilder().setBatchRegister(batch(1, SIZE))).getOk()).isTrue();
    ServiceDelta removal = nextPush(subscriber).getPush().getDelta();
    assertThat(removal.getUpsertedList()).isEmpty();
    assertThat(removal.getRemovedList()).containsExactly(
        InstanceIdentity.newBuilder().setIp("10.1.0.0").setPort(8080).setCluster("DEFAULT").build(),
        InstanceIdentity.newBuilder().setIp("10.9.9.9").setPort(9090).setCluster("DEFAULT").build());
  }

  @Test
  void aClientThatCannotApplyADeltaAsksForTheFullStateAndGetsItAtOnce() {
    TestSession provider = session("provider", false);
    provider.request(ClientFrame.newBuilder().setBatchRegister(batch(0, SIZE)));
    TestSession subscriber = session("subscriber", true);
    subscriber.subscribe("big");
    nextPush(subscriber);
    subscriber.ping();
    subscriber.autoAck(false);
    provider.register("big", "10.9.9.9", 9090);
    ServerFrame delta = nextPush(subscriber);
    assertThat(delta.getPush().hasDelta()).isTrue();

    long asked = System.nanoTime();
    subscriber.send(ClientFrame.newBuilder().setPushAck(PushAck.newBuilder()
        .setPushId(delta.getPush().getPushId()).setResync(true)).build());
    ServerFrame full = nextPush(subscriber);
    // At once, not at the ack timeout's re-send (3 s).
    assertThat(Duration.ofNanos(System.nanoTime() - asked)).isLessThan(TestTime.millis(2500));
    assertThat(full.getPush().hasServiceInfo()).isTrue();
    assertThat(full.getPush().getPushId()).isEqualTo(delta.getPush().getPushId());
    assertThat(full.getPush().getServiceInfo().getInstancesCount()).isEqualTo(SIZE + 1);
    assertThat(full.getPush().getServiceInfo().getChecksum()).isEqualTo(delta.getPush().getDelta().getChecksum());
    assertThat(loopback.server().sessions().all()).anySatisfy(s -> assertThat(s.deltaResyncs()).isEqualTo(1));
  }
}
