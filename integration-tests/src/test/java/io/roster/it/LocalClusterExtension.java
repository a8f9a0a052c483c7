package io.roster.it;

import io.roster.server.testing.process.LocalCluster;
import io.roster.server.testing.process.ServerLauncher;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * How the integration tests start a local cluster: a field with {@code @RegisterExtension}. A
 * test starts the cluster it needs ({@link #start}, {@link #startWithLinks}: the tests' server
 * launcher, three members) and hands over what it opens on it ({@link #closing}). After each
 * test, passed or failed, one teardown closes that in the reverse order, then stops every
 * member and frees its ports, proxies and data; when the test failed it first prints the end of
 * every member's output.
 */
final class LocalClusterExtension implements AfterEachCallback {

  private static final int LOG_LINES_ON_FAILURE = 60;

  private final Closer closing = new Closer();
  private LocalCluster cluster;

  /** Starts three members with {@code flags} and waits until every one is SERVING. */
  LocalCluster start(String... flags) {
    return started(LocalCluster.builder(ServerLauncher.forTests()).flags(flags));
  }

  /** As {@link #start}, with every peer link through proxies that can cut it. */
  LocalCluster startWithLinks(String... flags) {
    return started(LocalCluster.builder(ServerLauncher.forTests()).withLinks().flags(flags));
  }

  /** As {@link #start}, every member on the same client port of its own address ({@code LocalCluster.Builder#oneClientPort}). */
  LocalCluster startOnOneClientPort(String... flags) {
    return started(LocalCluster.builder(ServerLauncher.forTests()).oneClientPort().flags(flags));
  }

  /** As {@link #start}, with {@code --peer-tls off} on every member and no certificates. */
  LocalCluster startWithoutPeerTls(String... flags) {
    return started(LocalCluster.builder(ServerLauncher.forTests()).peerTls(false).flags(flags));
  }

  private LocalCluster started(LocalCluster.Builder builder) {
    if (cluster != null) {
      throw new IllegalStateException("one cluster per test");
    }
    cluster = builder.start();
    return cluster;
  }

  /** Closes {@code c} after the test, before the cluster (best effort); returns it. */
  <T extends AutoCloseable> T closing(T c) {
    return closing.add(c);
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    LocalCluster c = cluster;
    cluster = null;
    try {
      if (c != null && context.getExecutionException().isPresent()) {
        System.out.println(context.getDisplayName() + " failed; the members' output ends:\n"
            + c.logTails(LOG_LINES_ON_FAILURE));
      }
      closing.close();
    } finally {
      if (c != null) {
        c.close();
      }
    }
  }
}
