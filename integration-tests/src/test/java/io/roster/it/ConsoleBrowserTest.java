package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.naming.NamingFactory;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import com.alibaba.nacos.api.naming.pojo.Instance;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The console in a real headless Chromium (Debian's {@code chromium}, driven by {@code
 * playwright-core} from {@code make tools}; src/test/js/console.mjs) against a server process:
 * the Nacos getting-started path, live, with an official Nacos SDK subscriber watching, and the
 * console under auth. Skipped, saying why, where Chromium or playwright-core is not installed;
 * {@code .ci/run} installs both. Screenshots go to target/console-screenshots.
 */
class ConsoleBrowserTest {

  private static final Path CHROMIUM = Path.of(System.getenv().getOrDefault("ROSTER_CHROMIUM", "/usr/bin/chromium"));
  private static final Path PLAYWRIGHT = Path.of("../.tools/node_modules/playwright-core/index.mjs").toAbsolutePath();
  private static final Path SCRIPT = Path.of("src/test/js/console.mjs").toAbsolutePath();
  private static final Path SHOTS = Path.of("target/console-screenshots").toAbsolutePath();

  @TempDir Path dir;

  private final List<AutoCloseable> closers = new ArrayList<>();
  private final HttpClient http = HttpClient.newHttpClient();
  private static final ObjectMapper JSON = new ObjectMapper();

  @BeforeEach
  void browserInstalled() throws IOException {
    Assumptions.assumeTrue(Files.isExecutable(CHROMIUM), "no Chromium at " + CHROMIUM
        + " (Debian: apt-get install chromium; or set ROSTER_CHROMIUM): console browser tests skipped");
    Assumptions.assumeTrue(Files.exists(PLAYWRIGHT), "playwright-core not installed under .tools (make tools): "
        + "console browser tests skipped");
    Files.createDirectories(SHOTS);
    Path cache = Files.createDirectories(dir.resolve("nacos-cache"));
    System.setProperty("JM.SNAPSHOT.PATH", cache.toString());
    System.setProperty("JM.LOG.PATH", cache.resolve("logs").toString());
  }

  @AfterEach
  void close() throws Exception {
    for (int i = closers.size() - 1; i >= 0; i--) {
      closers.get(i).close();
    }
  }

  @Test
  void theNacosGettingStartedPathRunsLiveInTheConsole() throws Exception {
    ServerProcess server = server();
    String base = "http://127.0.0.1:" + (server.port - 1000);
    NamingService consumer = nacos(server);
    AtomicReference<String> seen = new AtomicReference<>("");
    consumer.subscribe("orders", e -> seen.set(((NamingEvent) e).getInstances().stream()
        .map(i -> i.getIp() + ":" + i.getPort()).sorted().collect(Collectors.joining(","))));
    Browser browser = browser("path", base);

    browser.await("READY");
    // As the getting-started guide does it, with curl.
    assertThat(post(base + "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.1&port=8080")).isEqualTo("ok");
    browser.send("REGISTERED");
    browser.await("SEEN orders");
    browser.await("OFFLINE");
    await().atMost(Timing.seconds(15)).until(() -> seen.get().isEmpty());
    browser.send("GO");
    browser.await("ONLINE");
    await().atMost(Timing.seconds(15)).until(() -> seen.get().equals("10.0.0.1:8080"));
    browser.await("METADATA");
    await().atMost(Timing.seconds(15)).until(() -> consumer.getAllInstances("orders").stream()
        .anyMatch(i -> "2".equals(i.getMetadata().get("version"))));
    String kept = "{\"a\":\"x,y=z\",\"preserved.heart.beat.timeout\":\"9000\"}";
    assertThat(post(base + "/nacos/v1/ns/instance", "serviceName=payments&ip=10.0.1.1&port=7000&ephemeral=false&metadata="
        + URLEncoder.encode(kept, StandardCharsets.UTF_8))).isEqualTo("ok");
    browser.send("PAYMENTS");
    browser.await("META UNCHANGED");
    assertThat(metadata(base, "payments")).isEqualTo(Map.of("a", "x,y=z", "preserved.heart.beat.timeout", "9000"));
    browser.send("ADD");
    browser.await("META ADDED");
    assertThat(metadata(base, "payments"))
        .isEqualTo(Map.of("a", "x,y=z", "b", "1", "preserved.heart.beat.timeout", "9000"));

    ProviderProcess provider = new ProviderProcess(server.address(), "orders", "10.0.0.2", 9090).awaitRegistered();
    closers.add(provider);
    browser.send("PROVIDER");
    browser.await("SEEN 10.0.0.2");
    provider.kill9();
    browser.send("KILLED");
    browser.await("GONE 10.0.0.2");
    browser.await("DRAINED");
    await().atMost(Timing.seconds(15)).until(() -> seen.get().isEmpty());
    browser.await("PHONE");
    browser.await("CONNECTION nacos-grpc");
    browser.finished();
  }

  @Test
  void theServiceListPagesAndSortsAServiceIsCreatedAndDeletedAndAClustersCheckIsSet() throws Exception {
    ServerProcess server = server();
    String base = "http://127.0.0.1:" + (server.port - 1000);
    // Persistent instances: they stay for the test, whatever its pace.
    for (int i = 0; i < 12; i++) {
      assertThat(post(base + "/nacos/v1/ns/instance",
          String.format("serviceName=svc-%02d&ip=10.0.0.1&port=80&ephemeral=false", i))).isEqualTo("ok");
    }
    for (int port = 80; port < 83; port++) {
      assertThat(post(base + "/nacos/v1/ns/instance", "serviceName=zz-big&ip=10.0.0.2&ephemeral=false&port=" + port))
          .isEqualTo("ok");
    }

    // A heartbeat instance: its owner is a lease, whose id is long and has no place to break a line.
    String longName = "a_service_with_a_name_long_enough_to_make_its_lease_id_longer_than_a_column_of_the_table_can_be";
    assertThat(post(base + "/nacos/v1/ns/instance", "serviceName=" + longName + "&ip=10.0.0.3&port=8080")).isEqualTo("ok");

    Browser browser = browser("list", base, "ROSTER_LONG_SERVICE", longName);
    browser.await("LAYOUT wide=true phone=true");
    assertThat(http.send(HttpRequest.newBuilder(URI.create(base + "/nacos/v1/ns/instance?serviceName=" + longName
        + "&ip=10.0.0.3&port=8080")).DELETE().build(), BodyHandlers.ofString()).body()).isEqualTo("ok");
    browser.send("LISTING");
    browser.await("LIST size=10 second=3 first=zz-big hideEmpty=true");
    browser.await("CREATED metadata={\"team\":\"a,b=c\"} gone=true");
    browser.await("NOT DELETED service DEFAULT_GROUP@@svc-00 has 1 instance in namespace public: deregister them first");
    browser.await("CHECKED");
    JsonNode check = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(base
        + "/nacos/v3/admin/ns/service?serviceName=svc-00")).build(), BodyHandlers.ofString()).body())
        .get("data").get("clusterMap").get("DEFAULT").get("healthChecker");
    assertThat(check.get("type").asText()).isEqualTo("HTTP");
    assertThat(check.get("path").asText()).isEqualTo("/health");
    browser.await("ZH 服务 搜索 每页条数 搜索服务");
    browser.await("ZH KEPT, THEN ENGLISH");
    browser.finished();
  }

  @Test
  void underAuthAWrongPasswordIsRefusedAndAReaderSeesNoEditButtons() throws Exception {
    String password = "the viewer's own password";
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json")).user("viewer", password, "read@public")
        .user("orders-team", password, "read@public", "admin@public/orders*").user("auditor", password, "read@*");
    String admin = auth.token("ops", "admin@*");
    ServerProcess server = server("--auth-file", auth.path().toString());
    String base = "http://127.0.0.1:" + (server.port - 1000);
    assertThat(post(base + "/nacos/v1/ns/instance?accessToken=" + admin, "serviceName=orders&ip=10.0.0.1&port=8080"))
        .isEqualTo("ok");

    Browser browser = browser("auth", base, "ROSTER_VIEWER_PASSWORD", password);
    browser.await("REFUSED");
    browser.await("VIEWING");
    assertThat(post(base + "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.3&port=8080&accessToken=" + admin))
        .isEqualTo("ok");
    browser.send("ADDED");
    browser.await("LIVE");
    browser.await("VIEWER buttons=0 saves=0 links=0");
    browser.await("LOGGED OUT");
    browser.await("ORDERS TEAM buttons=true saves=1 links=0");
    browser.await("AUDITOR");
    assertThat(post(base + "/nacos/v1/ns/instance?accessToken=" + admin, "namespaceId=dev&serviceName=billing&ip=10.0.0.4&port=80"))
        .isEqualTo("ok");
    browser.send("DEV");
    browser.await("SWITCHED");
    browser.finished();
    // The console's token went in headers, and no credential reached the server's log.
    assertThat(server.output()).doesNotContain(admin, password).doesNotContain("accessToken=rt1.");
  }

  // --- fixtures ---

  private ServerProcess server(String... flags) throws Exception {
    int port = Ports.freeForNacos();
    List<String> all = new ArrayList<>(List.of("--http-port", "auto"));
    all.addAll(List.of(flags));
    ServerProcess server = ServerProcess.start("127.0.0.1", port, all.toArray(String[]::new));
    closers.add(server);
    return server;
  }

  private NamingService nacos(ServerProcess server) throws Exception {
    Properties p = new Properties();
    p.setProperty(PropertyKeyConst.SERVER_ADDR, "127.0.0.1:" + (server.port - 1000));
    NamingService n = NamingFactory.createNamingService(p);
    closers.add(n::shutDown);
    return n;
  }

  private String post(String url, String form) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(url)).header("Content-Type", "application/x-www-form-urlencoded")
        .POST(HttpRequest.BodyPublishers.ofString(form)).build(), BodyHandlers.ofString()).body();
  }

  /** An instance's metadata as the admin API answers it: of the only instance of {@code service}. */
  private Map<String, String> metadata(String base, String service) throws Exception {
    JsonNode list = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(base
        + "/nacos/v3/admin/ns/instance/list?serviceName=" + service)).build(), BodyHandlers.ofString()).body());
    Map<String, String> out = new TreeMap<>();
    list.get("data").get(0).get("metadata").properties().forEach(e -> out.put(e.getKey(), e.getValue().asText()));
    return out;
  }

  private Browser browser(String mode, String base, String... env) throws IOException {
    ProcessBuilder pb = new ProcessBuilder("node", SCRIPT.toString(), mode, base, SHOTS.toString())
        .redirectErrorStream(true);
    pb.environment().put("ROSTER_PLAYWRIGHT", PLAYWRIGHT.toString());
    pb.environment().put("ROSTER_CHROMIUM", CHROMIUM.toString());
    for (int i = 0; i + 1 < env.length; i += 2) {
      pb.environment().put(env[i], env[i + 1]);
    }
    Browser b = new Browser(pb.start());
    closers.add(b);
    return b;
  }

  /** The node script: its output lines, and lines sent to it. */
  private static final class Browser implements AutoCloseable {
    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final StringBuilder output = new StringBuilder();
    private final Writer in;

    Browser(Process process) {
      this.process = process;
      this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
      Thread reader = new Thread(() -> {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
            StandardCharsets.UTF_8))) {
          for (String line; (line = r.readLine()) != null; ) {
            synchronized (output) {
              output.append(line).append('\n');
            }
            lines.add(line);
          }
        } catch (IOException ignored) {
          // the process is gone
        }
      }, "console-browser-output");
      reader.setDaemon(true);
      reader.start();
    }

    /** Waits for the script to print {@code STEP step}. */
    void await(String step) throws InterruptedException {
      long deadline = System.nanoTime() + Timing.seconds(90).toNanos();
      while (System.nanoTime() < deadline) {
        String line = lines.poll(1, TimeUnit.SECONDS);
        if (line == null) {
          if (!process.isAlive() && lines.isEmpty()) {
            break;
          }
          continue;
        }
        if (line.equals("STEP " + step)) {
          return;
        }
      }
      throw new AssertionError("the browser script did not reach " + step + ":\n" + output());
    }

    void send(String line) throws IOException {
      in.write(line + "\n");
      in.flush();
    }

    /** Waits for the end and checks the page wrote no error to the browser's console. */
    void finished() throws Exception {
      assertThat(process.waitFor(60, TimeUnit.SECONDS)).as(output()).isTrue();
      assertThat(output()).contains("ERRORS []").contains("WITH CREDENTIALS []").contains("DONE");
      assertThat(process.exitValue()).as(output()).isZero();
    }

    String output() {
      synchronized (output) {
        return output.toString();
      }
    }

    @Override
    public void close() {
      process.destroyForcibly();
    }
  }
}
