package io.roster.it;

import io.roster.server.testing.process.ServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;

/** One value of a server process's {@code GET /metrics}, for tests that watch a gauge. */
final class Scrape {

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private Scrape() {}

  /** The value of the unlabelled metric {@code name} that {@code server} exposes now. */
  static long value(ServerProcess server, String name) throws Exception {
    String body = HTTP.send(HttpRequest.newBuilder(URI.create("http://" + server.host + ":" + server.httpPort()
        + "/metrics")).timeout(Timing.seconds(5)).build(), BodyHandlers.ofString()).body();
    return body.lines().filter(l -> l.startsWith(name + " "))
        .mapToLong(l -> (long) Double.parseDouble(l.substring(l.indexOf(' ') + 1).trim())).findFirst()
        .orElseThrow(() -> new AssertionError("no " + name + " in " + body.length() + " bytes of metrics"));
  }
}
