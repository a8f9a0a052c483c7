package io.roster.server.testing.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** Free loopback ports. */
public final class Ports {

  private Ports() {}

  /**
   * The ports handed out lately in this JVM: the system may give a port it has just freed again,
   * and two asked for one after the other (a member's client and peer ports) must differ.
   */
  private static final com.github.benmanes.caffeine.cache.Cache<Integer, Boolean> GIVEN =
      com.github.benmanes.caffeine.cache.Caffeine.newBuilder().maximumSize(4096).build();

  /** A port that is free on the loopback address now, and not handed out lately by this JVM. */
  public static int free() {
    while (true) {
      int port;
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        s.setReuseAddress(true);
        port = s.getLocalPort();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      if (GIVEN.asMap().putIfAbsent(port, Boolean.TRUE) == null) {
        return port;
      }
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
