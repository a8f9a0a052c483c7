package io.roster.server.dns;

import io.roster.server.session.RequestCounters;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The DNS port (docs/dns.md): UDP and TCP on one port, {@link DnsAnswers} behind both.
 *
 * <p>UDP: one thread reads a datagram, answers it from memory and sends the answer, truncated
 * (TC set) to what the query offers, so a client asks again over TCP. TCP: one thread accepts;
 * connections are served by {@value #TCP_THREADS} threads, at most {@value #TCP_QUEUED} more
 * waiting, anything beyond closed at once; a connection may ask several questions, and is closed
 * after {@value #TCP_IDLE_MS} ms without one. Nothing grows with the number of clients.
 */
public final class DnsServer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(DnsServer.class);
  private static final int TCP_THREADS = 2;
  private static final int TCP_QUEUED = 64;
  private static final int TCP_IDLE_MS = 5_000;
  /** A TCP connection is closed this long after it was accepted, whatever it does: a slow reader or writer holds a thread no longer. */
  private static final int TCP_LIFETIME_MS = 10_000;

  private final DnsAnswers answers;
  private final RequestCounters counters;
  private final DatagramChannel udp;
  private final ServerSocketChannel tcp;
  private final ThreadPoolExecutor connections;
  /** Closes each TCP connection at the end of its lifetime (closing a socket ends a blocked read or write). */
  private final java.util.concurrent.ScheduledThreadPoolExecutor deadlines;
  private final Thread udpThread;
  private final Thread acceptThread;
  private volatile boolean closed;

  private DnsServer(DnsAnswers answers, RequestCounters counters, DatagramChannel udp, ServerSocketChannel tcp) {
    this.answers = answers;
    this.counters = counters;
    this.udp = udp;
    this.tcp = tcp;
    this.connections = new ThreadPoolExecutor(TCP_THREADS, TCP_THREADS, 0, TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(TCP_QUEUED), r -> daemon(r, "roster-dns-tcp"), new ThreadPoolExecutor.AbortPolicy());
    this.deadlines = new java.util.concurrent.ScheduledThreadPoolExecutor(1, r -> daemon(r, "roster-dns-deadlines"));
    deadlines.setRemoveOnCancelPolicy(true);
    this.udpThread = daemon(this::serveUdp, "roster-dns-udp");
    this.acceptThread = daemon(this::acceptTcp, "roster-dns-accept");
  }

  /**
   * Binds UDP and TCP on {@code host:port} (0: a free port, the same for both) and starts
   * answering.
   */
  public static DnsServer start(String host, int port, DnsAnswers answers, RequestCounters counters)
      throws IOException {
    IOException last = null;
    for (int attempt = 0; attempt < (port == 0 ? 5 : 1); attempt++) {
      ServerSocketChannel tcp = ServerSocketChannel.open();
      DatagramChannel udp = DatagramChannel.open();
      try {
        tcp.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        tcp.bind(new InetSocketAddress(host, port), 128);
        udp.bind(new InetSocketAddress(host, ((InetSocketAddress) tcp.getLocalAddress()).getPort()));
        DnsServer server = new DnsServer(answers, counters, udp, tcp);
        server.udpThread.start();
        server.acceptThread.start();
        return server;
      } catch (IOException e) {
        tcp.close();
        udp.close();
        last = e; // a free TCP port whose UDP twin is taken: another one
      }
    }
    throw java.util.Objects.requireNonNull(last);
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
        byte[] out = answer(query, true);
        if (out != null && from != null) {
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

  private void acceptTcp() {
    while (!closed) {
      Socket s;
      try {
        s = tcp.accept().socket();
      } catch (ClosedChannelException e) {
        return;
      } catch (IOException e) {
        if (!closed) {
          log.debug("DNS over TCP: accept: {}", e.toString());
        }
        continue;
      }
      java.util.concurrent.ScheduledFuture<?> deadline = deadlines.schedule(() -> closeQuietly(s), TCP_LIFETIME_MS,
          TimeUnit.MILLISECONDS);
      try {
        connections.execute(() -> {
          serveTcp(s);
          deadline.cancel(false);
        });
      } catch (RejectedExecutionException e) {
        deadline.cancel(false);
        closeQuietly(s); // every thread busy and the queue full: the client retries or gives up
      }
    }
  }

  /**
   * Length-prefixed queries until the client closes, stays silent for {@value #TCP_IDLE_MS} ms, or
   * the connection's {@value #TCP_LIFETIME_MS} ms are over.
   */
  private void serveTcp(Socket s) {
    try (s) {
      s.setSoTimeout(TCP_IDLE_MS);
      DataInputStream in = new DataInputStream(s.getInputStream());
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      while (!closed) {
        int length = in.readUnsignedShort();
        byte[] query = in.readNBytes(length);
        if (query.length < length) {
          return;
        }
        byte[] answer = answer(query, false);
        if (answer == null) {
          return;
        }
        out.writeShort(answer.length);
        out.write(answer);
        out.flush();
      }
    } catch (EOFException | SocketTimeoutException e) {
      // the client is done, or silent
    } catch (IOException | RuntimeException e) {
      log.debug("DNS over TCP: {}", e.toString());
    }
  }

  private byte @Nullable [] answer(byte[] query, boolean overUdp) {
    DnsAnswers.Answer a = answers.answer(query, overUdp);
    if (a == null) {
      counters.count(RequestCounters.Protocol.DNS, "other", "formerr");
      return null;
    }
    counters.count(RequestCounters.Protocol.DNS, a.type(), a.result());
    return a.wire();
  }

  @Override
  public void close() {
    closed = true;
    closeQuietly(udp);
    closeQuietly(tcp);
    connections.shutdownNow();
    deadlines.shutdownNow();
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
