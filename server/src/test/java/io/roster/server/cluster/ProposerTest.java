package io.roster.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.proto.cluster.v1.Batch;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Command;
import io.roster.server.registry.Registry;
import io.roster.server.time.FakeScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Group commit without Raft: a fake log that hands every entry straight to a registry, as the
 * state machine would once it is committed.
 */
class ProposerTest {

  private static final ServiceKey SVC = ServiceKey.of("public", "DEFAULT_GROUP", "svc");
  private static final Owner OWNER = Owner.session("m1:9849@x", "c-1");

  /** The window's timer, run by hand: a window ends when the test says. */
  private final FakeScheduler timer = new FakeScheduler();
  private final EntryClock clock = new EntryClock();
  private final Registry registry = new Registry(clock);
  private final List<Batch> entries = new CopyOnWriteArrayList<>();
  private volatile String unwritable;
  private volatile boolean failSends;
  private volatile boolean stalled;
  private Proposer proposer;


  private Proposer proposer(Duration window, int maxQueued) {
    proposer = new Proposer("m1:9849", "x", bytes -> {
      if (failSends) {
        return CompletableFuture.failedFuture(new IllegalStateException("no leader"));
      }
      try {
        Batch b = Batch.parseFrom(bytes);
        entries.add(b);
        // Applied as the state machine applies a committed entry, then results back.
        clock.set(b.getTimeMicros());
        List<Object> results = new ArrayList<>();
        for (var c : b.getCommandsList()) {
          try {
            results.add(LogCodec.decode(c, LogCodec.FORMAT).applyTo(registry));
          } catch (RuntimeException e) {
            results.add(e);
          }
        }
        proposer.onApplied(b, results);
        return CompletableFuture.completedFuture(null);
      } catch (Exception e) {
        return CompletableFuture.failedFuture(e);
      }
    }, timer, window, maxQueued, () -> 1_000_000L + entries.size(), () -> unwritable, () -> stalled);
    return proposer;
  }

  private static Instance instance(int port) {
    return new Instance("10.0.0.1", port, 1, true, true, true, "DEFAULT", Map.of(), "");
  }

  @Test
  void commandsWithinOneWindowGoToTheLogAsOneEntryAndEachGetsItsOwnResult() throws Exception {
    Proposer p = proposer(Duration.ofMillis(50), 1000);
    List<CompletableFuture<Instance>> done = new ArrayList<>();
    for (int port = 1; port <= 100; port++) {
      done.add(p.submit(new Command.Register(OWNER, SVC, instance(port))));
    }
    assertThat(entries).isEmpty();
    timer.advance(Duration.ofMillis(50));
    for (int i = 0; i < done.size(); i++) {
      assertThat(done.get(i).get(5, TimeUnit.SECONDS).port()).isEqualTo(i + 1);
    }
    assertThat(entries).hasSize(1);
    assertThat(entries.get(0).getCommandsCount()).isEqualTo(100);
    assertThat(registry.snapshot(SVC).instances()).hasSize(100);
    // Revisions come from the entry's time (one per change within it), not the registry's own clock.
    assertThat(registry.snapshot(SVC).revision()).isEqualTo(1_000_000L + 99);
  }

  /**
   * Under load, entries grow instead of multiplying: while this member's entry is in the log,
   * what its sessions send meanwhile waits, over any number of windows, and goes as one entry
   * once that one is applied here.
   */
  @Test
  void whileAnEntryIsInTheLogWhatComesMeanwhileGathersIntoTheNextOne() throws Exception {
    List<Batch> sent = new CopyOnWriteArrayList<>();
    Proposer p = new Proposer("m1:9849", "x", bytes -> {
      try {
        sent.add(Batch.parseFrom(bytes));
      } catch (Exception e) {
        return CompletableFuture.failedFuture(e);
      }
      return new CompletableFuture<>(); // committed later, when the test applies it
    }, timer, Duration.ofMillis(1), 1000, () -> 1_000_000L, () -> null, () -> false);
    CompletableFuture<Instance> first = p.submit(new Command.Register(OWNER, SVC, instance(1)));
    timer.advance(Duration.ofMillis(1));
    assertThat(sent).hasSize(1);

    List<CompletableFuture<Instance>> meanwhile = new ArrayList<>();
    for (int port = 2; port <= 6; port++) {
      meanwhile.add(p.submit(new Command.Register(OWNER, SVC, instance(port))));
      timer.advance(Duration.ofMillis(1)); // a window ends after each
    }
    assertThat(sent).as("one entry of this member in the log at a time").hasSize(1);

    p.onApplied(sent.get(0), List.of(instance(1)));
    assertThat(first).isCompleted();
    timer.runDue();
    assertThat(sent).hasSize(2);
    assertThat(sent.get(1).getCommandsCount()).as("everything that came meanwhile, in one entry").isEqualTo(5);
    p.onApplied(sent.get(1), List.of(instance(2), instance(3), instance(4), instance(5), instance(6)));
    assertThat(meanwhile).allMatch(CompletableFuture::isDone);
  }

  @Test
  void aRefusedCommandFailsAloneAndTheOthersOfItsEntryApply() throws Exception {
    Proposer p = proposer(Duration.ofMillis(50), 1000);
    CompletableFuture<Instance> first = p.submit(new Command.Register(OWNER, SVC, instance(1)));
    CompletableFuture<Boolean> missing = p.submit(new Command.Deregister(OWNER, SVC, new InstanceKey("10.9.9.9", 1, "DEFAULT")));
    CompletableFuture<Instance> refused = p.submit(new Command.UpdateInstance(SVC, new InstanceKey("10.0.0.1", 1, "DEFAULT"),
        null, null, null, false, Map.of("", "empty keys are refused")));
    CompletableFuture<Instance> last = p.submit(new Command.Register(OWNER, SVC, instance(2)));
    timer.advance(Duration.ofMillis(50));
    assertThat(first.get(5, TimeUnit.SECONDS).port()).isEqualTo(1);
    assertThat(missing.get(5, TimeUnit.SECONDS)).isFalse();
    assertThatThrownBy(() -> refused.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(RegistryException.class);
    assertThat(last.get(5, TimeUnit.SECONDS).port()).isEqualTo(2);
    assertThat(entries).hasSize(1);
  }

  @Test
  void aBatchTheLogDidNotTakeFailsWithUnavailable() {
    Proposer p = proposer(Duration.ofMillis(1), 1000);
    failSends = true;
    CompletableFuture<Instance> f = p.submit(new Command.Register(OWNER, SVC, instance(1)));
    timer.advance(Duration.ofMillis(1));
    assertThatThrownBy(() -> f.get(5, TimeUnit.SECONDS)).cause().isInstanceOfSatisfying(RegistryException.class,
        e -> assertThat(e.kind()).isEqualTo(RegistryException.Kind.UNAVAILABLE)).hasMessageContaining("no leader");
  }

  /** Each change that fails before the log is counted once, by why: the series roster_cluster_proposals_failed_total reads. */
  @Test
  void failedChangesAreCountedByReason() {
    Proposer p = proposer(Duration.ofMillis(1), 2);
    assertThat(failures(p)).containsOnlyKeys(Proposer.FAILURE_REASONS).allSatisfy((reason, n) -> assertThat(n).isZero());
    unwritable = "this member is cut off";
    assertThatThrownBy(() -> p.submit(new Command.Register(OWNER, SVC, instance(1)))).isInstanceOf(RegistryException.class);
    unwritable = null;
    failSends = true;
    CompletableFuture<Instance> notTaken = p.submit(new Command.Register(OWNER, SVC, instance(2)));
    timer.advance(Duration.ofMillis(1));
    assertThat(notTaken).isCompletedExceptionally();
    p.submit(new Command.Register(OWNER, SVC, instance(3)));
    p.submit(new Command.Register(OWNER, SVC, instance(4)));
    assertThatThrownBy(() -> p.submit(new Command.Register(OWNER, SVC, instance(5)))).isInstanceOf(RegistryException.class);
    p.failAll("stopping");

    assertThat(failures(p)).containsEntry("unwritable", 1L).containsEntry("not_taken", 1L)
        .containsEntry("queue_full", 1L).containsEntry("stopped", 2L);
  }

  private static Map<String, Long> failures(Proposer p) {
    Map<String, Long> out = new java.util.LinkedHashMap<>();
    p.forEachFailure(out::put);
    return out;
  }

  @Test
  void aMemberThatCannotWriteRefusesAtOnceAndTheQueueIsBounded() {
    Proposer p = proposer(Duration.ofSeconds(30), 3);
    unwritable = "this member is cut off";
    assertThatThrownBy(() -> p.submit(new Command.Register(OWNER, SVC, instance(1))))
        .isInstanceOf(RegistryException.class).hasMessageContaining("cut off");
    unwritable = null;
    for (int port = 1; port <= 3; port++) {
      p.submit(new Command.Register(OWNER, SVC, instance(port)));
    }
    assertThatThrownBy(() -> p.submit(new Command.Register(OWNER, SVC, instance(4))))
        .isInstanceOf(RegistryException.class).hasMessageContaining("limit: 3");
  }

  @Test
  void theEndOfAnOwnerWaitsOutACutOffMemberAndIsProposedAgainUntilTheLogHasIt() throws Exception {
    Proposer p = proposer(Duration.ofMillis(1), 1000);
    p.submit(new Command.Register(OWNER, SVC, instance(1)));
    timer.advance(Duration.ofMillis(1));
    assertThat(registry.ownedCount(OWNER)).isEqualTo(1);

    unwritable = "this member is cut off";
    failSends = true;
    CompletableFuture<Void> end = p.submit(new Command.RemoveOwner(OWNER)); // not refused
    timer.advance(Duration.ofMillis(1));
    timer.advance(Proposer.RETRY_ENDS_AFTER.plusMillis(1));
    assertThat(end).isNotDone();
    assertThat(registry.ownedCount(OWNER)).isEqualTo(1);

    stalled = true; // back, but still holding ends: the retry waits
    failSends = false;
    timer.advance(Proposer.RETRY_ENDS_AFTER.multipliedBy(3));
    timer.advance(Duration.ofMillis(1));
    assertThat(end).isNotDone();
    assertThat(registry.ownedCount(OWNER)).isEqualTo(1);

    stalled = false; // the hold is over
    timer.advance(Proposer.RETRY_ENDS_AFTER.plusMillis(1));
    timer.advance(Duration.ofMillis(1));
    end.get(5, TimeUnit.SECONDS);
    assertThat(registry.ownedCount(OWNER)).isZero();
  }

  /**
   * A stopping member past its grace cuts its last sessions without ending their owners: the
   * clients are alive and moving, and the leader ends what does not move within the grace.
   */
  @Test
  void afterTheStopGraceTheEndsOfOwnersStayOutOfTheLog() throws Exception {
    Proposer p = proposer(Duration.ofMillis(1), 1000);
    p.submit(new Command.Register(OWNER, SVC, instance(1)));
    timer.advance(Duration.ofMillis(1));
    int before = entries.size();

    p.keepOwners();
    p.submit(new Command.RemoveOwner(OWNER)).get(5, TimeUnit.SECONDS);
    timer.advance(Duration.ofMillis(1));

    assertThat(entries).as("nothing proposed").hasSize(before);
    assertThat(registry.ownedCount(OWNER)).isEqualTo(1);
    p.submit(new Command.Register(OWNER, SVC, instance(2)));
    timer.advance(Duration.ofMillis(1));
    assertThat(entries).as("other changes still go to the log").hasSize(before + 1);
  }

  @Test
  void rightAfterAStallTheEndOfAnOwnerWaitsSoThatItsClientsNewRegistrationsGoFirst() throws Exception {
    Proposer p = proposer(Duration.ofMillis(1), 1000);
    p.submit(new Command.Register(OWNER, SVC, instance(1)));
    timer.advance(Duration.ofMillis(1));

    stalled = true; // frozen: its client left it and registers again through another member
    CompletableFuture<Void> end = p.submit(new Command.RemoveOwner(OWNER));
    Owner moved = Owner.session("m2:9849@y", "c-1");
    p.submit(new Command.Register(moved, SVC, instance(2)));
    timer.advance(Duration.ofMillis(1));
    assertThat(entries).as("the new registration only").hasSize(2);
    assertThat(end).isNotDone();
    assertThat(registry.ownedCount(OWNER)).isEqualTo(1);

    timer.advance(Membership.HOLD_ENDS_AFTER_STALL.multipliedBy(3));
    assertThat(end).as("held as long as the member holds ends").isNotDone();

    stalled = false; // the member's hold is over
    timer.advance(Proposer.RETRY_ENDS_AFTER);
    timer.advance(Duration.ofMillis(1));
    end.get(5, TimeUnit.SECONDS);
    assertThat(registry.ownedCount(OWNER)).isZero();
    assertThat(registry.ownedCount(moved)).isEqualTo(1);
  }

  @Test
  void everyCommandSurvivesTheLogsFormat() {
    ServiceKey other = ServiceKey.of("ns", "g", "other");
    InstanceKey key = new InstanceKey("10.0.0.1", 1, "DEFAULT");
    Instance withId = instance(7).withId(SVC);
    List<Command<?>> all = List.of(
        new Command.Register(OWNER, SVC, new Instance("h", 2, 3.5, false, false, true, "c1", Map.of("a", "b"), "id")),
        new Command.Register(OWNER, SVC, instance(5), new io.roster.server.registry.Claim("client-1", 42)),
        new Command.ReplaceOwned(OWNER, SVC, List.of(instance(6)), new io.roster.server.registry.Claim("client-1", 43)),
        new Command.Deregister(OWNER, other, key),
        new Command.ReplaceOwned(new Owner("m2@y", Owner.Kind.LEASE, "l-1"), SVC, List.of(withId, instance(8))),
        new Command.RemoveOwned(new Owner("m2@y", Owner.Kind.NACOS, "n-1"), SVC),
        new Command.RemoveOwner(OWNER),
        new Command.UpdateInstance(SVC, key, true, 0.0, null, true, Map.of("x", "y")),
        new Command.UpdateInstance(SVC, key, null, null, false, false, Map.of()),
        new Command.UpdateInstance(SVC, key, false, null, null, false, Map.of(), true),
        new Command.UpdateSettings(other, 0.25, false, Map.of("team", "t")),
        new Command.UpdateSettings(other, null, true, Map.of()));
    for (Command<?> c : all) {
      assertThat(LogCodec.decode(LogCodec.encode(c), LogCodec.FORMAT)).isEqualTo(c);
    }
  }
}
