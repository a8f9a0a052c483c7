package io.roster.server.naming;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.auth.Principal;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Registry;
import io.roster.server.registry.Writer;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class PersistentTest {

  private final ServiceKey db = ServiceKey.of("", "", "db");
  private final Instance instance = new Instance("10.0.7.1", 5229, 1, true, true, false, "", Map.of(), "");
  private final InstanceKey key = instance.key();

  /**
   * A member whose registry has not applied a registration yet (it was taken through another
   * member a moment ago) still sends a removal of it to the log, which knows it: answered "not
   * there" from its own view, the removal would be acknowledged and never happen.
   */
  @Test
  void aRemovalTakenByAMemberThatHasNotSeenTheRegistrationYetGoesThroughTheLog() throws Exception {
    AtomicLong clock = new AtomicLong(1_000);
    Registry log = new Registry(clock::incrementAndGet); // what the log has applied
    Registry behind = new Registry(clock::incrementAndGet); // this member's registry, an entry behind
    Persistent persistent = new Persistent(behind, Writer.direct(log));
    new Persistent(log, Writer.direct(log)).register(db, instance, Principal.ANONYMOUS).get();

    CompletableFuture<Boolean> removed = persistent.deregister(db, key, Principal.ANONYMOUS);

    assertThat(removed.get()).as("removed where the log has it").isTrue();
    assertThat(log.ownerOf(db, key)).isNull();
  }

  @Test
  void aRemovalOfWhatIsNowhereAnswersThatThereWasNone() throws Exception {
    Registry registry = new Registry(new AtomicLong()::incrementAndGet);
    assertThat(new Persistent(registry, Writer.direct(registry)).deregister(db, key, Principal.ANONYMOUS).get())
        .isFalse();
    assertThat(registry.ownerOf(db, key)).isNull();
  }
}
