package io.roster.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.server.config.ServerConfig;
import io.roster.server.model.Owner;
import io.roster.server.registry.Registry;
import io.roster.server.testing.TestTime;
import io.roster.server.testing.process.Ports;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A member of a one-member group on a real peer port, with a server that records what it is asked. */
class ClusterNodeTest {

  @TempDir Path data;

  /**
   * The server builds its session manager after the member has started (the member's writer is
   * what the sessions write through): a member that asked it for its session count from its
   * start failed its watch with a NullPointerException on every start of a loaded machine. The
   * member asks nothing of its server before it is announced.
   */
  @Test
  void theServerIsAskedNothingBeforeTheMemberIsAnnounced() {
    int peerPort = Ports.free();
    ServerConfig config = ServerConfig.builder().host("127.0.0.1").peerPort(peerPort)
        .members(List.of("127.0.0.1:" + peerPort)).peerTls(false).dataDir(data).build();
    EntryClock clock = ClusterNode.entryClock();
    Recording local = new Recording();
    try (ClusterNode node = ClusterNode.start(config.cluster(), config.host(), data, new Registry(clock), clock, local,
        () -> System.currentTimeMillis() * 1000, "test")) {
      await().atMost(TestTime.seconds(30)).until(node::isLeader);
      // Several watch periods with the member running and leading its group: nothing asked.
      await("nothing asked of the server before the member is announced")
          .during(ClusterNode.WATCH_EVERY.multipliedBy(6)).atMost(TestTime.seconds(30))
          .until(local.calls::isEmpty);

      node.announce("127.0.0.1:1");
      await().atMost(TestTime.seconds(30)).until(() -> local.calls.containsAll(List.of("caughtUp", "sessionCount")));
    }
  }

  /** A server that records the names of the calls it gets. */
  private static final class Recording implements ClusterNode.Local {
    final List<String> calls = new CopyOnWriteArrayList<>();

    @Override
    public void caughtUp() {
      calls.add("caughtUp");
    }

    @Override
    public void writable(@Nullable String reason, Supplier<String> suggest) {
      calls.add("writable");
    }

    @Override
    public void serving(@Nullable String reason) {
      calls.add("serving");
    }

    @Override
    public void ownersEnded(List<Owner> owners, Supplier<String> suggest) {
      calls.add("ownersEnded");
    }

    @Override
    public int sessionCount() {
      calls.add("sessionCount");
      return 0;
    }

    @Override
    public int shed(int count, String to) {
      calls.add("shed");
      return 0;
    }
  }
}
