package io.roster.server.testing;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.server.RosterServer;
import io.roster.server.config.ServerConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A {@link RosterServer} on a real loopback socket ({@code 127.0.0.1}, a free port) for one
 * test, with the channels and {@link TestSession}s the test opens on it; all of them are closed
 * after the test: sessions, then channels, then a background close still running, then the
 * server. Modelled on jetcd-test's {@code GrpcServerExtension}.
 *
 * <pre>{@code
 * @RegisterExtension
 * final LoopbackServer loopback = LoopbackServer.with(b -> b.maxInstancesPerConnection(3));
 * }</pre>
 *
 * <p>Every server gets {@code shutdownGrace} of one scaled second unless the customiser says
 * otherwise. By default the server starts before each test; {@link #startedByTest()} leaves
 * that to the test, for tests that each want other settings ({@link #start(UnaryOperator)}).
 * Also usable without JUnit, for a second server in one test: {@code try (LoopbackServer other
 * = LoopbackServer.with(..)) { other.start(); .. }}.
 *
 * <p>Not thread-safe: call it from the test's thread.
 */
public final class LoopbackServer implements BeforeEachCallback, AfterEachCallback, AutoCloseable {

  private final UnaryOperator<ServerConfig.Builder> config;
  private UnaryOperator<NettyChannelBuilder> channelSettings = UnaryOperator.identity();
  private boolean startedByTest;
  private UnaryOperator<ServerConfig.Builder> lastStart = UnaryOperator.identity();
  private io.roster.server.time.Scheduler scheduler;

  private RosterServer server;
  private ManagedChannel channel;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final List<TestSession> sessions = new ArrayList<>();
  private Thread closer;

  private LoopbackServer(UnaryOperator<ServerConfig.Builder> config) {
    this.config = config;
  }

  /** A server with the default settings (and a scaled one-second shutdown grace). */
  public static LoopbackServer withDefaults() {
    return new LoopbackServer(UnaryOperator.identity());
  }

  /** A server whose settings {@code config} changes, on top of the defaults. */
  public static LoopbackServer with(UnaryOperator<ServerConfig.Builder> config) {
    return new LoopbackServer(config);
  }

  /** The test starts the server itself, with {@link #start()} or {@link #start(UnaryOperator)}. */
  public LoopbackServer startedByTest() {
    startedByTest = true;
    return this;
  }

  /**
   * Servers run on {@code scheduler} (owned by the test, closed after the fixture) and the system's
   * wall clock for revisions, instead of a scheduler of their own.
   */
  public LoopbackServer scheduler(io.roster.server.time.Scheduler scheduler) {
    this.scheduler = scheduler;
    return this;
  }

  /** Settings for every channel this fixture opens (say, a larger inbound message size). */
  public LoopbackServer channelSettings(UnaryOperator<NettyChannelBuilder> settings) {
    this.channelSettings = settings;
    return this;
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    if (!startedByTest) {
      start();
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    close();
  }

  /** Starts the server with the fixture's settings. */
  public RosterServer start() {
    return start(UnaryOperator.identity());
  }

  /** Starts the server with the fixture's settings, then {@code more}. */
  public RosterServer start(UnaryOperator<ServerConfig.Builder> more) {
    if (server != null) {
      throw new IllegalStateException("already started; close() or restart() first");
    }
    ServerConfig.Builder b = ServerConfig.builder().dataDir(null).host("127.0.0.1").port(0).shutdownGrace(TestTime.seconds(1));
    ServerConfig built = more.apply(config.apply(b)).build();
    server = scheduler == null ? RosterServer.start(built)
        : RosterServer.start(built, scheduler, io.roster.server.time.SystemScheduler::wallClockMicros);
    lastStart = more;
    return server;
  }

  /** Closes everything, then starts a new server with the same settings (on another port). */
  public RosterServer restart() {
    close();
    return start(lastStart);
  }

  /** The running server. */
  public RosterServer server() {
    if (server == null) {
      throw new IllegalStateException("not started");
    }
    return server;
  }

  /** The server's port. */
  public int port() {
    return server().port();
  }

  /** The fixture's shared channel (one connection), opened on first use. */
  public ManagedChannel channel() {
    if (channel == null) {
      channel = newChannel();
    }
    return channel;
  }

  /** Another channel to the server: a connection of its own. */
  public ManagedChannel newChannel() {
    return newChannel(UnaryOperator.identity());
  }

  /** Another channel to the server, with {@code more} settings on top of the fixture's. */
  public ManagedChannel newChannel(UnaryOperator<NettyChannelBuilder> more) {
    return track(more.apply(channelSettings.apply(
        NettyChannelBuilder.forAddress("127.0.0.1", port()).usePlaintext())).build());
  }

  /** A channel to {@code target} ({@code host:port}, say a proxy in front of the server). */
  public ManagedChannel channelTo(String target) {
    return track(channelSettings.apply(NettyChannelBuilder.forTarget(target).usePlaintext()).build());
  }

  private ManagedChannel track(ManagedChannel c) {
    channels.add(c);
    return c;
  }

  /** A Connect stream on the shared channel that has not said hello. */
  public TestSession open() {
    return open(channel());
  }

  /** A Connect stream on {@code channel} that has not said hello. */
  public TestSession open(ManagedChannel channel) {
    return open(channel, -1);
  }

  /** A Connect stream that reads {@code initialRequests} server frames and then stops reading. */
  public TestSession open(ManagedChannel channel, int initialRequests) {
    TestSession s = new TestSession(channel, initialRequests);
    sessions.add(s);
    return s;
  }

  /** A session on the shared channel that has said hello as {@code clientId}. */
  public TestSession session(String clientId) {
    return open().hello(clientId);
  }

  /**
   * Starts closing the server on a thread of its own (close blocks for up to the shutdown
   * grace) and returns that thread; after the test it is given ten scaled seconds to end.
   */
  public Thread closeInBackground() {
    RosterServer s = server();
    closer = new Thread(s::close, "closer");
    closer.start();
    return closer;
  }

  /**
   * Cancels the sessions still open, shuts the channels down, waits for a background close and
   * closes the server. Idempotent; the fixture can start again afterwards.
   */
  @Override
  public void close() {
    RuntimeException failure = null;
    for (TestSession s : sessions) {
      try {
        s.close();
      } catch (RuntimeException e) {
        failure = collect(failure, e);
      }
    }
    sessions.clear();
    channels.forEach(ManagedChannel::shutdownNow);
    channels.clear();
    channel = null;
    if (closer != null) {
      try {
        closer.join(TestTime.seconds(10).toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      closer = null;
    }
    if (server != null) {
      try {
        server.close();
      } catch (RuntimeException e) {
        failure = collect(failure, e);
      }
      server = null;
    }
    if (failure != null) {
      throw failure;
    }
  }

  private static RuntimeException collect(RuntimeException first, RuntimeException next) {
    if (first == null) {
      return next;
    }
    first.addSuppressed(next);
    return first;
  }
}
