package io.roster.server.dns;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DNS over TCP on one thread (docs/dns.md, decision 95): a selector over the listening channel
 * and every connection, all non-blocking. Owns the connections, their buffers and their
 * deadlines:
 *
 * <ul>
 *   <li>at most {@code maxConnections} open: a new one closes the one that has been idle
 *       longest, so that clients that hold connections and say nothing never keep a real query
 *       out;
 *   <li>a query's bytes (at most {@value #MAX_QUERY}, its buffer taken at its first byte and
 *       given back when it is whole) must all arrive within {@value #QUERY_MS} ms of its first
 *       byte: a client that sends a byte at a time is closed;
 *   <li>one answer at a time waits to be written, and nothing more is read until it is out; it
 *       must be taken within {@value #WRITE_MS} ms;
 *   <li>{@value #IDLE_MS} ms without a query closes a connection.
 * </ul>
 *
 * <p>Answers are computed on the loop's thread (a lookup in memory, about 10 µs). Deadlines are
 * read on the injected clock. Thread-safe: {@link #close()} from any thread; everything else runs
 * on the loop's thread ({@link #run()}).
 */
final class DnsTcp implements Runnable, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(DnsTcp.class);
  /** The longest query taken: one question and its EDNS options fit many times over. */
  static final int MAX_QUERY = 4096;
  static final int QUERY_MS = 2_000;
  static final int WRITE_MS = 5_000;
  static final int IDLE_MS = 5_000;
  /** How often deadlines are looked at. */
  private static final int SWEEP_MS = 100;
  /** Connections taken per wake-up: the rest wait in the kernel's backlog for the next. */
  private static final int ACCEPTS_PER_WAKE = 64;

  private final ServerSocketChannel server;
  private final Selector selector;
  private final Function<byte[], byte @Nullable []> answers;
  private final LongSupplier nanoTime;
  private final int maxConnections;
  /** The open connections, the one active longest ago first (access order). */
  private final LinkedHashMap<SocketChannel, Connection> open = new LinkedHashMap<>(64, 0.75f, true);
  private volatile boolean closed;

  /** One connection's state; touched only on the loop's thread. */
  private static final class Connection {
    final SocketChannel channel;
    final SelectionKey key;
    /** The query being read, with its length prefix; null between queries. */
    @Nullable ByteBuffer in;
    /** The answer being written, with its length prefix; null when none waits. */
    @Nullable ByteBuffer out;
    /** When the connection is closed unless something happens first (the clock's nanoseconds). */
    long deadline;

    Connection(SocketChannel channel, SelectionKey key) {
      this.channel = channel;
      this.key = key;
    }
  }

  /**
   * @param server a bound channel, configured non-blocking
   * @param answers the answer's bytes for a query's, or null to close the connection
   */
  DnsTcp(ServerSocketChannel server, Function<byte[], byte @Nullable []> answers, LongSupplier nanoTime,
      int maxConnections) throws IOException {
    this.server = server;
    this.answers = answers;
    this.nanoTime = nanoTime;
    this.maxConnections = maxConnections;
    this.selector = Selector.open();
    server.register(selector, SelectionKey.OP_ACCEPT);
  }

  @Override
  public void run() {
    long lastSweep = nanoTime.getAsLong();
    try {
      while (!closed) {
        selector.select(open.isEmpty() ? 0 : SWEEP_MS);
        if (closed) {
          return;
        }
        long now = nanoTime.getAsLong();
        for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
          SelectionKey key = it.next();
          it.remove();
          if (key.isValid()) {
            ready(key, now);
          }
        }
        if (now - lastSweep >= TimeUnit.MILLISECONDS.toNanos(SWEEP_MS)) {
          sweep(now);
          lastSweep = now;
        }
      }
    } catch (ClosedSelectorException e) {
      // closed
    } catch (IOException | RuntimeException e) {
      if (!closed) {
        log.warn("DNS over TCP stopped", e);
      }
    } finally {
      for (Connection c : new ArrayList<>(open.values())) {
        close(c);
      }
      closeQuietly(selector);
    }
  }

  private void ready(SelectionKey key, long now) {
    if (key.isAcceptable()) {
      accept(now);
      return;
    }
    Connection c = (Connection) key.attachment();
    try {
      if (key.isReadable()) {
        read(c, now);
      } else if (key.isWritable()) {
        drive(c, now);
      }
    } catch (IOException | RuntimeException e) {
      log.debug("DNS over TCP: {}", e.toString());
      close(c);
    }
  }

  private void accept(long now) {
    for (int i = 0; i < ACCEPTS_PER_WAKE; i++) {
      SocketChannel channel;
      try {
        channel = server.accept();
      } catch (IOException e) {
        if (!closed) {
          log.debug("DNS over TCP: accept: {}", e.toString());
        }
        return;
      }
      if (channel == null) {
        return;
      }
      if (open.size() >= maxConnections) {
        close(open.values().iterator().next()); // the one idle longest makes room
      }
      try {
        channel.configureBlocking(false);
        Connection c = new Connection(channel, channel.register(selector, SelectionKey.OP_READ));
        c.key.attach(c);
        c.deadline = now + TimeUnit.MILLISECONDS.toNanos(IDLE_MS);
        open.put(channel, c);
      } catch (IOException e) {
        closeQuietly(channel);
      }
    }
  }

  private void read(Connection c, long now) throws IOException {
    ByteBuffer in = c.in;
    if (in == null) {
      in = ByteBuffer.allocate(2 + MAX_QUERY);
      c.in = in;
    }
    boolean started = in.position() > 0;
    int n = c.channel.read(in);
    if (n < 0) {
      close(c);
      return;
    }
    if (!started && in.position() > 0) {
      c.deadline = now + TimeUnit.MILLISECONDS.toNanos(QUERY_MS);
    }
    drive(c, now);
  }

  /** Writes what waits, then answers each whole query read, until a write must wait or no query is whole. */
  private void drive(Connection c, long now) throws IOException {
    while (true) {
      ByteBuffer out = c.out;
      if (out != null) {
        c.channel.write(out);
        if (out.hasRemaining()) {
          c.key.interestOps(SelectionKey.OP_WRITE);
          return;
        }
        c.out = null;
        c.deadline = now + TimeUnit.MILLISECONDS.toNanos(c.in == null ? IDLE_MS : QUERY_MS);
      }
      ByteBuffer in = c.in;
      if (in == null || in.position() < 2) {
        break;
      }
      int length = ((in.get(0) & 0xff) << 8) | (in.get(1) & 0xff);
      if (length == 0 || length > MAX_QUERY) {
        close(c); // not a query this server takes
        return;
      }
      if (in.position() < 2 + length) {
        break;
      }
      byte[] query = new byte[length];
      in.flip();
      in.position(2);
      in.get(query);
      in.compact();
      if (in.position() == 0) {
        c.in = null;
      }
      byte[] answer = answers.apply(query);
      if (answer == null) {
        close(c);
        return;
      }
      c.out = ByteBuffer.allocate(2 + answer.length).putShort((short) answer.length).put(answer).flip();
      c.deadline = now + TimeUnit.MILLISECONDS.toNanos(WRITE_MS);
      open.get(c.channel); // active: the last to be closed to make room
    }
    c.key.interestOps(SelectionKey.OP_READ);
  }

  private void sweep(long now) {
    List<Connection> due = new ArrayList<>();
    for (Connection c : open.values()) {
      if (now - c.deadline >= 0) {
        due.add(c);
      }
    }
    for (Connection c : due) {
      close(c);
    }
  }

  private void close(Connection c) {
    open.remove(c.channel);
    c.key.cancel();
    closeQuietly(c.channel);
  }

  @Override
  public void close() {
    closed = true;
    selector.wakeup();
  }

  private static void closeQuietly(java.io.Closeable c) {
    try {
      c.close();
    } catch (IOException e) {
      // closing anyway
    }
  }
}
