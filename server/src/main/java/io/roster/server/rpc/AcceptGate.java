package io.roster.server.rpc;

import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.ServerChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.net.SocketAddress;
import java.util.function.Predicate;

/**
 * Closes a new connection as it is accepted, before its TLS or HTTP/2 handshake, when {@code
 * refused} says its remote address is not welcome (a host refused unchecked after too many bad
 * credentials): the handshakes, not the credential checks, are what a flood of guesses costs.
 * A handler on the listening channel's pipeline, ahead of Netty's acceptor, so the connection is
 * never registered with an event loop.
 *
 * <p>Giving gRPC a channel factory means giving it event loops too. These are gRPC's defaults
 * (epoll where the native transport loads, NIO elsewhere; one boss thread, Netty's default count
 * of workers; daemon threads), made once and shared by every server in the process as gRPC
 * shares its own.
 */
@ChannelHandler.Sharable
final class AcceptGate extends ChannelInboundHandlerAdapter {

  private static final boolean EPOLL = Epoll.isAvailable();

  private static final class Loops {
    static final EventLoopGroup BOSS = group(1, "roster-grpc-boss");
    static final EventLoopGroup WORKER = group(0, "roster-grpc-worker");

    private static EventLoopGroup group(int threads, String name) {
      DefaultThreadFactory threadFactory = new DefaultThreadFactory(name, true);
      return new MultiThreadIoEventLoopGroup(threads, threadFactory,
          EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    }
  }

  private final Predicate<String> refused;

  private AcceptGate(Predicate<String> refused) {
    this.refused = refused;
  }

  /** Puts the gate on {@code builder}'s listening channel, with the event loops that go with it. */
  static NettyServerBuilder install(NettyServerBuilder builder, Predicate<String> refused) {
    AcceptGate gate = new AcceptGate(refused);
    return builder
        .channelFactory(() -> {
          ServerChannel channel = EPOLL ? new EpollServerSocketChannel() : new NioServerSocketChannel();
          channel.pipeline().addLast(gate);
          return channel;
        })
        .bossEventLoopGroup(Loops.BOSS)
        .workerEventLoopGroup(Loops.WORKER);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof Channel child) {
      SocketAddress remote = child.remoteAddress();
      if (remote != null && refused.test(remote.toString())) {
        child.unsafe().closeForcibly();
        return;
      }
    }
    ctx.fireChannelRead(msg);
  }
}
