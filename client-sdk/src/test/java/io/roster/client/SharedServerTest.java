package io.roster.client;

import io.roster.server.RosterServer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/** One in-JVM server per test class on a loopback port; the clients a test makes are closed after it. */
abstract class SharedServerTest {

  static RosterServer server;
  final List<RosterClient> clients = new ArrayList<>();

  @BeforeAll
  static void startServer() {
    server = TestServers.start(0);
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @AfterEach
  void closeClients() {
    clients.forEach(RosterClient::close);
  }

  /** A client with the test defaults, closed after the test. */
  RosterClient newClient() {
    return track(TestServers.client(server).build());
  }

  /** Closes {@code client} after the test. */
  RosterClient track(RosterClient client) {
    clients.add(client);
    return client;
  }
}
