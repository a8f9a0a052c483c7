package io.roster.client;

import io.roster.server.RosterServer;
import io.roster.server.config.ServerConfig;
import java.time.Duration;

/** Starts in-JVM Roster servers on real loopback ports for the end-to-end tests. */
final class TestServers {

  /** One factor scales every timeout on a slow machine (-Droster.test.timeFactor=2). */
  static final int TIME_FACTOR = Integer.getInteger("roster.test.timeFactor", 1);

  private TestServers() {}

  /** Starts a server on 127.0.0.1, on a free port when {@code port} is 0. */
  static RosterServer start(int port) {
    return RosterServer.start(ServerConfig.builder()
        .host("127.0.0.1")
        .port(port)
        .build());
  }

  /** A bound for waiting on something that normally takes milliseconds. */
  static Duration patience() {
    return Duration.ofSeconds(10L * TIME_FACTOR);
  }

  /** A client builder for the given server with test-friendly defaults. */
  static RosterClient.Builder client(RosterServer server) {
    return RosterClient.builder()
        .serverAddresses("127.0.0.1:" + server.port())
        .requestTimeout(Duration.ofSeconds(3L * TIME_FACTOR));
  }
}
