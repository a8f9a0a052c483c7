package io.roster.server.probe;

import io.grpc.netty.shaded.io.netty.bootstrap.Bootstrap;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelFuture;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInitializer;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.SimpleChannelInboundHandler;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpClientCodec;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpHeaderNames;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpHeaderValues;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpMethod;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpObject;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpResponse;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpVersion;
import io.grpc.netty.shaded.io.netty.util.NetUtil;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.netty.shaded.io.netty.util.concurrent.ScheduledFuture;
import io.roster.server.registry.HealthCheck;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The probes themselves, on one Netty event loop thread: a TCP connect, or an HTTP GET whose
 * status line is all that is read. What a probe may cost is bounded whatever the target does:
 *
 * <ul>
 *   <li>it goes only to the address and port given (the instance's own, or its check port), and
 *       only to an IP literal: a host name is never resolved, so a probe cannot be steered by DNS;
 *   <li>each probe ends within {@code timeout}, connect and response together (a target that
 *       accepts and never answers, or drips its status line, is closed at the deadline);
 *   <li>an HTTP response's status line and headers may take 1 KiB and 8 KiB; the body is never
 *       read, and a redirect is only a status that is not the expected one, never followed;
 *   <li>every socket is closed with SO_LINGER 0 (a reset), so the prober keeps no TIME_WAIT
 *       entry per probe;
 *   <li>at most {@code maxInFlight} probes run at once; beyond that a probe is skipped, not queued;
 *   <li>a target its {@link ProbePolicy} refuses is skipped, never connected to: registrations are
 *       refused there already, and this catches what was registered under another policy (the flag
 *       changed across a restart).
 * </ul>
 *
 * <p>Thread-safe. {@code done} is called once per probe, on the event loop thread.
 */
public final class ProbeClient implements Probes, AutoCloseable {

  static final String USER_AGENT = "Roster-Health-Probe";
  private static final int MAX_STATUS_LINE = 1024;
  private static final int MAX_HEADERS = 8192;

  private final EventLoopGroup loop;
  private final Bootstrap bootstrap;
  private final long timeoutMs;
  private final int maxInFlight;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final ProbePolicy policy;

  /** Probes under the default {@link ProbePolicy}. */
  public ProbeClient(Duration timeout, int maxInFlight) {
    this(timeout, maxInFlight, ProbePolicy.DEFAULT);
  }

  /** @param policy where probes may go ({@code --probe-allow}) */
  public ProbeClient(Duration timeout, int maxInFlight, ProbePolicy policy) {
    this.policy = policy;
    this.timeoutMs = timeout.toMillis();
    this.maxInFlight = maxInFlight;
    this.loop = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("roster-probe", true),
        NioIoHandler.newFactory());
    this.bootstrap = new Bootstrap().group(loop).channel(NioSocketChannel.class)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) timeoutMs)
        .option(ChannelOption.SO_LINGER, 0)
        .option(ChannelOption.TCP_NODELAY, true);
  }

  /** Probes now in flight. */
  public int inFlight() {
    return inFlight.get();
  }

  @Override
  public void probe(String ip, int port, HealthCheck check, Consumer<Outcome> done) {
    byte[] literal = NetUtil.createByteArrayFromIpAddressString(ip);
    if (literal == null) {
      done.accept(Outcome.skipped("the address " + ip + " is not an IP literal (host names are not probed)"));
      return;
    }
    ProbePolicy.Refusal refused = policy.refusal(ip, port);
    if (refused != null) {
      done.accept(Outcome.skipped("the target " + ip + ":" + port + " is refused: " + refused.reason()));
      return;
    }
    if (inFlight.incrementAndGet() > maxInFlight) {
      inFlight.decrementAndGet();
      done.accept(Outcome.skipped(maxInFlight + " probes already in flight"));
      return;
    }
    InetSocketAddress target;
    try {
      target = new InetSocketAddress(InetAddress.getByAddress(literal), port);
    } catch (UnknownHostException e) {
      throw new AssertionError("a 4- or 16-byte address", e);
    }
    Once once = new Once(done);
    boolean http = check.type() == HealthCheck.Type.HTTP;
    Bootstrap b = bootstrap.clone().option(ChannelOption.AUTO_READ, http).handler(new ChannelInitializer<Channel>() {
      @Override
      protected void initChannel(Channel ch) {
        if (http) {
          ch.pipeline().addLast(new HttpClientCodec(MAX_STATUS_LINE, MAX_HEADERS, MAX_HEADERS),
              new StatusHandler(check.expectedStatus(), once));
        }
      }
    });
    ChannelFuture connect = b.connect(target);
    Channel channel = connect.channel();
    ScheduledFuture<?> deadline = loop.schedule(() -> {
      once.finish(Outcome.unhealthy("no answer within " + timeoutMs + " ms"));
      channel.close();
    }, timeoutMs, TimeUnit.MILLISECONDS);
    channel.closeFuture().addListener(f -> {
      deadline.cancel(false);
      once.finish(Outcome.unhealthy("the connection closed before a response"));
    });
    connect.addListener((ChannelFuture f) -> {
      if (!f.isSuccess()) {
        Throwable cause = f.cause();
        once.finish(!http && resetAfterHandshake(cause) ? Outcome.HEALTHY
            : Outcome.unhealthy(cause == null ? "connect failed" : String.valueOf(cause.getMessage())));
        channel.close();
      } else if (!http) {
        once.finish(Outcome.HEALTHY);
        channel.close();
      } else {
        DefaultFullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, check.path());
        check.headers().forEach((k, v) -> request.headers().set(k, v));
        request.headers().set(HttpHeaderNames.HOST, NetUtil.toSocketAddressString(target))
            .set(HttpHeaderNames.USER_AGENT, USER_AGENT)
            .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        channel.writeAndFlush(request);
      }
    });
  }

  /**
   * Whether a failed connect failed only after the handshake: the target accepted and reset the
   * connection before this side saw it complete (a busy listener that accepts and closes at
   * once). Something listens, which is what a TCP probe asks. A refused connect, no route or a
   * timeout are {@link java.net.ConnectException}s or {@link java.net.NoRouteToHostException}s.
   */
  private static boolean resetAfterHandshake(@Nullable Throwable cause) {
    return cause instanceof java.net.SocketException && !(cause instanceof java.net.ConnectException)
        && !(cause instanceof java.net.NoRouteToHostException)
        && String.valueOf(cause.getMessage()).toLowerCase(java.util.Locale.ROOT).contains("connection reset");
  }

  @Override
  public void close() {
    loop.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).syncUninterruptibly();
  }

  /** Reads the status of the response's head, then closes: the body is never read. */
  private static final class StatusHandler extends SimpleChannelInboundHandler<HttpObject> {
    private final int expected;
    private final Once once;

    StatusHandler(int expected, Once once) {
      this.expected = expected;
      this.once = once;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
      if (msg.decoderResult().isFailure()) {
        once.finish(Outcome.unhealthy("an unreadable response (" + msg.decoderResult().cause().getMessage() + ")"));
      } else if (msg instanceof HttpResponse r) {
        int status = r.status().code();
        once.finish(status == expected ? Outcome.HEALTHY
            : Outcome.unhealthy("HTTP " + status + " (expected " + expected + ")"));
      }
      ctx.close();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      once.finish(Outcome.unhealthy(String.valueOf(cause.getMessage())));
      ctx.close();
    }
  }

  /** Calls {@code done} once, and counts the probe out of flight. */
  private final class Once {
    private final Consumer<Outcome> done;
    private final AtomicBoolean finished = new AtomicBoolean();

    Once(Consumer<Outcome> done) {
      this.done = done;
    }

    void finish(Outcome outcome) {
      if (finished.compareAndSet(false, true)) {
        inFlight.decrementAndGet();
        done.accept(outcome);
      }
    }
  }
}
