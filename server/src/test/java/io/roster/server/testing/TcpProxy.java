package io.roster.server.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback TCP proxy that can freeze: it stops forwarding in both directions but keeps every
 * socket open, so each side sees a silent peer rather than a closed connection (a black hole).
 * Connections accepted while frozen are held open and never forwarded (a listener that says
 * nothing). It can also {@link #drop()}: close every connection and close each new one at once,
 * as a host whose port is unreachable (a partition that resets). {@link #heal()} forwards again,
 * on new connections.
 * Shared by the server, SDK and integration tests (the server's test jar).
 */
public final class TcpProxy implements AutoCloseable {

  private final ServerSocket listener;
  private final InetSocketAddress target;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final AtomicInteger accepted = new AtomicInteger();
  /** Taken while a connection is accepted and set up, and by {@link #heal()}. */
  private final Object lock = new Object();
  private volatile boolean frozen;
  private volatile boolean dropping;
  private volatile boolean closed;

  /** A proxy to {@code 127.0.0.1:targetPort}; {@code frozen} to say nothing from the start. */
  public TcpProxy(int targetPort, boolean frozen) throws IOException {
    this("127.0.0.1", targetPort, frozen);
  }

  /** A forwarding proxy to {@code targetHost:targetPort}. */
  public TcpProxy(String targetHost, int targetPort) throws IOException {
    this(targetHost, targetPort, false);
  }

  private TcpProxy(String targetHost, int targetPort, boolean frozen) throws IOException {
    this.target = new InetSocketAddress(targetHost, targetPort);
    this.frozen = frozen;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::acceptLoop, "proxy-accept-" + listener.getLocalPort());
    t.setDaemon(true);
    t.start();
  }

  /** Where clients connect: {@code 127.0.0.1:port}. */
  public String address() {
    return "127.0.0.1:" + listener.getLocalPort();
  }

  /** The proxy's own port. */
  public int port() {
    return listener.getLocalPort();
  }

  /** TCP connections accepted so far. */
  public int accepted() {
    return accepted.get();
  }

  /** Stops forwarding, without closing anything. */
  public void freeze() {
    frozen = true;
  }

  /** Closes every connection, and from now on each new one as soon as it is accepted, until {@link #heal()}. */
  public void drop() {
    List<Socket> old;
    synchronized (lock) {
      dropping = true;
      old = List.copyOf(sockets);
      sockets.removeAll(old);
    }
    closeAll(old);
  }

  /**
   * Forwards again. The connections of the freeze are closed, since the bytes it swallowed are
   * gone: each side sees its connection end and connects anew (as after a partition that
   * outlived its TCP connections), and connections accepted from now on are forwarded.
   */
  public void heal() {
    List<Socket> old;
    synchronized (lock) {
      old = List.copyOf(sockets);
      sockets.removeAll(old);
      frozen = false;
      dropping = false;
    }
    closeAll(old);
  }

  private static void closeAll(List<Socket> sockets) {
    for (Socket s : sockets) {
      try {
        s.close();
      } catch (IOException ignored) {
        // Closing is all we want.
      }
    }
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        Socket client = listener.accept();
        accepted.incrementAndGet();
        synchronized (lock) {
          if (dropping) {
            client.close();
            continue;
          }
          sockets.add(client);
          if (frozen) {
            continue;
          }
          Socket upstream = new Socket();
          sockets.add(upstream);
          try {
            upstream.connect(target, 5000);
          } catch (IOException refused) {
            client.close(); // as the target would have: the client sees its connection end
            continue;
          }
          pump(client, upstream);
          pump(upstream, client);
        }
      } catch (IOException e) {
        if (closed) {
          return;
        }
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t = new Thread(() -> {
      byte[] buf = new byte[16384];
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        int n;
        while ((n = in.read(buf)) >= 0) {
          if (frozen) {
            while (!closed && in.read(buf) >= 0) {
              // Swallow and never forward again: the peer goes silent; sockets stay open.
            }
            return;
          }
          out.write(buf, 0, n);
          out.flush();
        }
        to.shutdownOutput();
      } catch (IOException ignored) {
        // One side went away; the other notices on its own.
      }
    }, "proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  @Override
  public void close() throws IOException {
    closed = true;
    listener.close();
    for (Socket s : sockets) {
      s.close();
    }
  }
}
