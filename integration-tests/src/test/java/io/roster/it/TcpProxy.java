package io.roster.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A loopback TCP proxy that can freeze: it stops forwarding in both directions but keeps
 * every socket open, so each side sees a silent peer rather than a closed connection.
 * Connections accepted while frozen are held open and never forwarded.
 */
final class TcpProxy implements AutoCloseable {

  private final ServerSocket listener;
  private final InetSocketAddress target;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile boolean frozen;
  private volatile boolean closed;

  TcpProxy(String targetHost, int targetPort) throws IOException {
    this.target = new InetSocketAddress(targetHost, targetPort);
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::acceptLoop, "proxy-accept-" + listener.getLocalPort());
    t.setDaemon(true);
    t.start();
  }

  int port() {
    return listener.getLocalPort();
  }

  String address() {
    return "127.0.0.1:" + port();
  }

  /** Stops forwarding, without closing anything. */
  void freeze() {
    frozen = true;
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        Socket client = listener.accept();
        sockets.add(client);
        if (frozen) {
          continue;
        }
        Socket upstream = new Socket();
        upstream.connect(target, 5000);
        sockets.add(upstream);
        pump(client, upstream);
        pump(upstream, client);
      } catch (IOException e) {
        if (!closed) {
          continue;
        }
        return;
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
            // Swallow and never forward again: the peer goes silent; sockets stay open.
            while (!closed && in.read(buf) >= 0) {
              // discard
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
