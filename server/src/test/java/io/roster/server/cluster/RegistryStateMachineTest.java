package io.roster.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.proto.cluster.v1.Batch;
import io.roster.proto.cluster.v1.MemberDown;
import io.roster.proto.cluster.v1.MemberStarted;
import io.roster.server.model.Instance;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Command;
import io.roster.server.registry.Registry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

/** The membership facts the log keeps, applied entry by entry as a follower would. */
class RegistryStateMachineTest {

  private static final ServiceKey SVC = ServiceKey.of("public", "DEFAULT_GROUP", "svc");

  private final EntryClock clock = new EntryClock();
  private final Registry registry = new Registry(clock);
  private final List<Object> results = new ArrayList<>();
  private final RegistryStateMachine machine = new RegistryStateMachine(registry, clock, (b, r, i) -> results.addAll(r));
  private long index;

  /** The entries below come from member n0, which announced itself first, unless a test says otherwise. */
  RegistryStateMachineTest() {
    applyFrom("n0", "x", started("n0", "x"));
  }

  private void apply(io.roster.proto.cluster.v1.Command... commands) {
    applyFrom("n0", "x", commands);
  }

  private void applyFrom(String origin, String incarnation, io.roster.proto.cluster.v1.Command... commands) {
    applyFrom(origin, incarnation, index + 1, commands);
  }

  private void applyFrom(String origin, String incarnation, long sequence, io.roster.proto.cluster.v1.Command... commands) {
    Batch.Builder b = Batch.newBuilder().setOrigin(origin).setIncarnation(incarnation).setSequence(sequence)
        .setTimeMicros(1_000_000L + index);
    for (io.roster.proto.cluster.v1.Command c : commands) {
      b.addCommands(c);
    }
    index++;
    LogEntryProto entry = LogEntryProto.newBuilder().setTerm(1).setIndex(index)
        .setStateMachineLogEntry(StateMachineLogEntryProto.newBuilder().setLogData(ByteString.copyFrom(b.build().toByteArray())))
        .build();
    machine.applyTransaction(TransactionContext.newBuilder().setStateMachine(machine)
        .setServerRole(RaftPeerRole.FOLLOWER).setLogEntry(entry).build()).join();
  }

  private static io.roster.proto.cluster.v1.Command started(String member, String incarnation) {
    return io.roster.proto.cluster.v1.Command.newBuilder().setMemberStarted(MemberStarted.newBuilder()
        .setMember(member).setIncarnation(incarnation).setClientAddress(member + ":9848")).build();
  }

  private static io.roster.proto.cluster.v1.Command down(String member) {
    return io.roster.proto.cluster.v1.Command.newBuilder().setMemberDown(MemberDown.newBuilder().setMember(member))
        .build();
  }

  private static io.roster.proto.cluster.v1.Command register(String nodeId) {
    return LogCodec.encode(new Command.Register(Owner.session(nodeId, "c-1"), SVC,
        new Instance("10.0.0.1", 80, 1, true, true, true, "DEFAULT", Map.of(), "")));
  }

  /**
   * A member recorded down that comes back with the same incarnation (it was frozen, not dead)
   * is not stale any more: when it goes down again later, the leader's grace starts anew
   * instead of ending its owners at once (chaos run of 2026-12-02, 13:40:57).
   */
  @Test
  void aMemberBackWithTheSameIncarnationIsNoLongerStale() {
    apply(started("n1", "a"), register("n1@a"));
    assertThat(machine.stale()).isEmpty();

    apply(down("n1"));
    assertThat(machine.stale()).containsOnlyKeys("n1");

    apply(started("n1", "a"));
    assertThat(machine.stale()).as("back: its owners are live again").isEmpty();
    assertThat(registry.ownedCount(Owner.session("n1@a", "c-1"))).isEqualTo(1);

    apply(down("n1"));
    assertThat(machine.stale()).as("down again: stale from this entry on").containsEntry("n1", index);
  }

  @Test
  void aMemberBackWithANewIncarnationStaysStaleWhileOwnersOfTheOldOneRemain() {
    apply(started("n1", "a"), register("n1@a"));
    apply(down("n1"));

    apply(started("n1", "b"));

    assertThat(machine.stale()).containsOnlyKeys("n1");
  }

  /**
   * A member back with a new incarnation while owners of the old one remain stays stale; when it
   * goes down again it is stale from that entry on, so that the leader's grace starts anew for
   * the owners of the incarnation that just went down. Short chaos of 2026-12-02, 17:10:38: a
   * member restarted 4 s before its SIGTERM had its 7 live sessions' owners ended 116 ms after
   * it, because the grace had run since its previous incarnation went down (decision 54).
   */
  @Test
  void aMemberThatGoesDownAgainIsStaleFromItsNewDown() {
    apply(started("n1", "a"), register("n1@a"));
    apply(down("n1"));
    long firstDown = index;
    apply(started("n1", "b"), register("n1@b"));
    assertThat(machine.stale()).as("owners of incarnation a remain").containsEntry("n1", firstDown);

    apply(down("n1"));

    assertThat(machine.stale()).containsEntry("n1", index);
  }

  /**
   * Only a member's sessions register, under an incarnation the log knows: a registration whose
   * owner names anything else (a process that is not a member wrote to the log, or a past
   * incarnation's late entry) changes nothing, since nothing would ever end such an owner.
   */
  @Test
  void aRegistrationWhoseOwnerNamesNoKnownMemberIncarnationChangesNothing() {
    apply(started("n1", "a"));
    results.clear();

    apply(register("intruder@z"), register("n1@old"), register("n1"), register("n1@a"));

    assertThat(results.subList(0, 3)).allSatisfy(r -> assertThat(r).isInstanceOf(RegistryException.class)
        .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.THROWABLE).hasMessageStartingWith("owner: "));
    assertThat(results.get(3)).isInstanceOf(Instance.class);
    assertThat(registry.ownedCount(Owner.session("intruder@z", "c-1"))).isZero();
    assertThat(registry.ownedCount(Owner.session("n1@old", "c-1"))).isZero();
    assertThat(registry.ownedCount(Owner.session("n1@a", "c-1"))).isEqualTo(1);
  }

  /**
   * Only members write to the log: an entry whose origin is no member incarnation the log knows
   * is dropped on every member, whatever it holds, persistent instances and membership included
   * (a process on a peer port without TLS wrote one, and every member applied its persistent
   * instance). A member's first entry announces its own new incarnation and is the one exception.
   */
  @Test
  void anEntryFromNoKnownMemberIncarnationIsDroppedWhateverItHolds() {
    var persistent = LogCodec.encode(new Command.Register(Owner.PERSISTENT, SVC,
        new Instance("127.0.0.67", 21998, 1, true, true, false, "DEFAULT", Map.of(), ""),
        new io.roster.server.registry.Claim("", 0, "ops", true)));
    results.clear();

    applyFrom("intruder", "1", persistent, started("n5", "q"), down("n0"));
    applyFrom("n0", "old", persistent);
    applyFrom("n1", "a", started("n1", "b"), persistent);

    assertThat(results).hasSize(6).allSatisfy(r -> assertThat(r).isInstanceOf(RegistryException.class)
        .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.THROWABLE).hasMessageStartingWith("origin: "));
    assertThat(registry.instance(SVC, new io.roster.server.model.InstanceKey("127.0.0.67", 21998, "DEFAULT"))).isNull();
    assertThat(machine.members()).extracting(RegistryStateMachine.Member::id).containsExactly("n0");
    assertThat(machine.members().get(0).down()).isFalse();

    results.clear();
    applyFrom("n1", "a", started("n1", "a"), persistent);
    assertThat(results.get(0)).isNull();
    assertThat(results.get(1)).as("announced, then admitted").isInstanceOf(Instance.class);
  }

  /**
   * A batch the log took twice is applied once: a member's proposal retried by its Ratis client
   * can reach a new leader before the first copy was applied there, and both copies are
   * committed. Applied again after a later batch removed what it registered, the second copy
   * brought back an acknowledged removal (the fault suite's persistent writer saw it: "removed
   * 10.0.7.1:5072" still on every member). Every member drops the copy, a snapshot included.
   */
  @Test
  void aSecondCopyOfABatchIsDroppedSoThatItUndoesNothingThatCameAfterIt() throws Exception {
    var persistent = new Instance("10.0.7.1", 5072, 1, true, true, false, "DEFAULT", Map.of(), "");
    var key = new io.roster.server.model.InstanceKey("10.0.7.1", 5072, "DEFAULT");
    applyFrom("n1", "a", 1, started("n1", "a"));
    applyFrom("n1", "a", 2, LogCodec.encode(new Command.Register(Owner.PERSISTENT, SVC, persistent,
        io.roster.server.registry.Claim.NONE)));
    applyFrom("n1", "a", 3, LogCodec.encode(new Command.Deregister(Owner.PERSISTENT, SVC, key,
        new io.roster.server.registry.Claim("", 0, "", true))));
    results.clear();

    applyFrom("n1", "a", 2, LogCodec.encode(new Command.Register(Owner.PERSISTENT, SVC, persistent,
        io.roster.server.registry.Claim.NONE)));

    assertThat(registry.instance(SVC, key)).as("the removal stands").isNull();
    assertThat(results).singleElement().isInstanceOf(RegistryException.class);
    applyFrom("n1", "a", 4, register("n1@a"));
    assertThat(registry.ownedCount(Owner.session("n1@a", "c-1"))).as("what follows is applied").isEqualTo(1);

    // A member that starts from a snapshot drops the copy too.
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    SnapshotCodec.write(out, registry.image(), machine.members(), List.of(), Map.of("n1@a", 4L));
    SnapshotCodec.Loaded loaded = SnapshotCodec.read(new java.io.ByteArrayInputStream(out.toByteArray()), "test");
    assertThat(loaded.lastSequences()).containsEntry("n1@a", 4L);
  }
}
