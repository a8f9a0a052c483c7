package io.roster.server.dns;

import io.roster.server.session.RequestCounters;
import io.roster.server.time.Scheduler;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The DNS port (docs/dns.md): UDP and TCP on one port, {@link DnsAnswers} behind both.
 *
 * <p>UDP: one thread reads a datagram, answers it from memory and sends the answer, truncated
 * (TC set) to what the query offers, so a client asks again over TCP; with a rate limit, each
 * source prefix gets that many answers a second ({@link RateLimit}). TCP: one thread runs a
 * selector over every connection ({@link DnsTcp}): at most {@value #TCP_CONNECTIONS} open, the
 * one idle longest closed to make room, each with bounded buffers and deadlines. Nothing grows
 * with the number of clients.
 */
public final class DnsServer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(DnsServer.class);
  /** The most TCP connections open at once. */
  static final int TCP_CONNECTIONS = 1_024;

  private final DnsAnswers answers;
  private final RequestCounters counters;
  private final DatagramChannel udp;
  private final ServerSocketChannel tcp;
  private final DnsTcp tcpLoop;
  private final @Nullable RateLimit rateLimit;
  private final Thread udpThread;
  private final Thread tcpThread;
  private volatile boolean closed;

  private DnsServer(DnsAnswers answers, RequestCounters counters, DatagramChannel udp, ServerSocketChannel tcp,
      LongSupplier nanoTime, int rateLimit, int tcpConnections) throws IOException {
    this.answers = answers;
    this.counters = counters;
    this.udp = udp;
    this.tcp = tcp;
    this.rateLimit = rateLimit == 0 ? null : new RateLimit(rateLimit, nanoTime);
    this.tcpLoop = new DnsTcp(tcp, query -> answer(query, false), nanoTime, tcpConnections);
    this.udpThread = daemon(this::serveUdp, "roster-dns-udp");
    this.tcpThread = daemon(tcpLoop, "roster-dns-tcp");
  }

  /**
   * Binds UDP and TCP on {@code host:port} (0: a free port, the same for both) and starts
   * answering.
   *
   * @param clock the server's clock, for the TCP deadlines and the rate limit
   * @param rateLimit UDP responses a second per source prefix ({@code --dns-rate-limit}), 0 for
   *     no limit
   */
  public static DnsServer start(String host, int port, DnsAnswers answers, RequestCounters counters,
      Scheduler clock, int rateLimit) throws IOException {
    return start(host, port, answers, counters, clock::nanoTime, rateLimit, TCP_CONNECTIONS);
  }

  static DnsServer start(String host, int port, DnsAnswers answers, RequestCounters counters, LongSupplier nanoTime,
      int rateLimit, int tcpConnections) throws IOException {
    IOException last = null;
    for (int attempt = 0; attempt < (port == 0 ? 5 : 1); attempt++) {
      ServerSocketChannel tcp = ServerSocketChannel.open();
      DatagramChannel udp = DatagramChannel.open();
      try {
        tcp.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        tcp.bind(new InetSocketAddress(host, port), 128);
        tcp.configureBlocking(false);
        udp.bind(new InetSocketAddress(host, ((InetSocketAddress) tcp.getLocalAddress()).getPort()));
        answers.nameServer(ownAddresses(((InetSocketAddress) tcp.getLocalAddress()).getAddress(), interfaceAddresses()));
        DnsServer server = new DnsServer(answers, counters, udp, tcp, nanoTime, rateLimit, tcpConnections);
        server.udpThread.start();
        server.tcpThread.start();
        return server;
      } catch (IOException e) {
        tcp.close();
        udp.close();
        last = e; // a free TCP port whose UDP twin is taken: another one
      }
    }
    throw java.util.Objects.requireNonNull(last);
  }

  /**
   * The addresses {@code ns.roster.} answers: the bound one; for a wildcard, every address of the
   * machine's interfaces that is neither loopback, link-local nor multicast (the loopback ones
   * when there is no other), as read at the start.
   */
  static List<InetAddress> ownAddresses(InetAddress bound, List<InetAddress> interfaces) {
    if (!bound.isAnyLocalAddress()) {
      return List.of(bound);
    }
    List<InetAddress> global = interfaces.stream()
        .filter(a -> !a.isLoopbackAddress() && !a.isLinkLocalAddress() && !a.isMulticastAddress()).toList();
    return !global.isEmpty() ? global : interfaces.stream().filter(InetAddress::isLoopbackAddress).toList();
  }

  private static List<InetAddress> interfaceAddresses() {
    List<InetAddress> all = new ArrayList<>();
    try {
      for (NetworkInterface i : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        if (i.isUp()) {
          all.addAll(Collections.list(i.getInetAddresses()));
        }
      }
    } catch (SocketException e) {
      log.debug("DNS: the interfaces' addresses: {}", e.toString());
    }
    return all;
  }

  /** The bound port (UDP and TCP). */
  public int port() {
    try {
      return ((InetSocketAddress) tcp.getLocalAddress()).getPort();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private void serveUdp() {
    ByteBuffer in = ByteBuffer.allocate(65535);
    while (!closed) {
      try {
        in.clear();
        SocketAddress from = udp.receive(in);
        in.flip();
        byte[] query = new byte[in.remaining()];
        in.get(query);
        if (from == null) {
          continue;
        }
        RateLimit limit = rateLimit;
        RateLimit.Verdict verdict = limit == null ? RateLimit.Verdict.ANSWER
            : limit.admit(((InetSocketAddress) from).getAddress());
        byte[] out;
        if (verdict == RateLimit.Verdict.ANSWER) {
          out = answer(query, true);
        } else {
          counters.count(RequestCounters.Protocol.DNS, "other", "limited");
          out = verdict == RateLimit.Verdict.SLIP ? DnsAnswers.slip(query) : null;
        }
        if (out != null) {
          udp.send(ByteBuffer.wrap(out), from);
        }
      } catch (ClosedChannelException e) {
        return;
      } catch (IOException | RuntimeException e) {
        if (!closed) {
          log.debug("DNS over UDP: {}", e.toString());
        }
      } catch (Error e) {
        log.warn("DNS over UDP stopped", e);
        throw e;
      }
    }
  }

  private byte @Nullable [] answer(byte[] query, boolean overUdp) {
    long start = counters.start();
    DnsAnswers.Answer a = answers.answer(query, overUdp);
    if (a == null) {
      counters.count(RequestCounters.Protocol.DNS, "other", "formerr", start);
      return null;
    }
    counters.count(RequestCounters.Protocol.DNS, a.type(), a.result(), start);
    return a.wire();
  }

  @Override
  public void close() {
    closed = true;
    closeQuietly(udp);
    tcpLoop.close();
    closeQuietly(tcp);
  }

  private static void closeQuietly(java.io.Closeable c) {
    try {
      c.close();
    } catch (IOException e) {
      // closing anyway
    }
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
