package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.roster.server.testing.Tmpfs;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A standalone server process on a 2 MiB tmpfs (docs/persistence.md, "A full disk"; root only,
 * as CI runs, else skipped naming why): persistent registrations until the disk refuses them with
 * 503, space freed, two more, {@code kill -9}, a start on the same directory: every acknowledged
 * registration is there, and none that was refused.
 */
class StandaloneFullDiskTest {

  /** Makes each journal record about 3 KiB. */
  private static final String METADATA = "{\"a\":\"" + "x".repeat(1000) + "\",\"b\":\"" + "y".repeat(1000)
      + "\",\"c\":\"" + "z".repeat(1000) + "\"}";

  @TempDir Path dir;

  private final Closer closing = new Closer();
  private final HttpClient http = HttpClient.newHttpClient();
  private final int port = Ports.free();
  private final int httpPort = Ports.free();

  @AfterEach
  void stop() {
    closing.close();
  }

  private ServerProcess start(Path data) {
    ServerProcess s = ServerProcess.start("127.0.0.1", port, "--data-dir", data.toString(), "--http-port",
        Integer.toString(httpPort));
    closing.add(s);
    return s;
  }

  private HttpResponse<String> register(String ip) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort
        + "/nacos/v1/ns/instance?serviceName=orders-db&port=5432&ephemeral=false&ip=" + ip + "&metadata="
        + URLEncoder.encode(METADATA, StandardCharsets.UTF_8))).timeout(Timing.seconds(30))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), BodyHandlers.ofString());
  }

  private static String ip(int i) {
    return "10.0." + (i / 250) + "." + (i % 250 + 1);
  }

  @Test
  void afterTheDiskFilledAndSpaceCameBackAKilledServerStartsWithEveryAcknowledgedRegistration() throws Exception {
    Path data = dir.resolve("data");
    Tmpfs disk = Tmpfs.mount(data, "size=2m");
    closing.add(disk);
    Path filler = data.resolve("filler-outside-roster");
    ServerProcess server = start(data);
    Files.write(filler, new byte[256 * 1024]); // what the operator deletes to make room

    Set<String> acknowledged = new LinkedHashSet<>();
    int refused = 0;
    int i = 0;
    while (refused < 3 && i < 5_000) {
      String ip = ip(i++);
      HttpResponse<String> r = register(ip);
      if (r.statusCode() == 200) {
        acknowledged.add(ip);
      } else {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
        assertThat(r.body()).contains("data directory");
        refused++;
      }
    }
    assertThat(refused).as("the disk filled").isEqualTo(3);

    Files.delete(filler);
    for (int k = 0; k < 2; k++) {
      String ip = ip(i++);
      HttpResponse<String> r = register(ip);
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      acknowledged.add(ip);
    }
    server.kill9();
    start(data);

    HttpResponse<String> list = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort
        + "/nacos/v1/ns/instance/list?serviceName=orders-db&healthyOnly=false")).timeout(Timing.seconds(30)).build(),
        BodyHandlers.ofString());
    assertThat(list.statusCode()).as(list.body()).isEqualTo(200);
    Set<String> back = new TreeSet<>();
    for (JsonNode host : new ObjectMapper().readTree(list.body()).path("hosts")) {
      back.add(host.path("ip").asText());
    }
    assertThat(back).isEqualTo(new TreeSet<>(acknowledged));
  }
}
