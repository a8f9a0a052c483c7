package io.roster.server.testing.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** Free loopback ports. */
public final class Ports {

  private Ports() {}

  /** A port that is free on the loopback address now. */
  public static int free() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * A free port above 1000: a server's gRPC port that a Nacos client can reach, since it is given
   * the HTTP port (the gRPC port − 1000, {@code --http-port auto}) and adds 1000 to it.
   */
  public static int freeForNacos() {
    int port;
    do {
      port = free();
    } while (port <= 1000);
    return port;
  }
}
