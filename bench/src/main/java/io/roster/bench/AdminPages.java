package io.roster.bench;

import io.roster.bench.driver.BenchClient;
import io.roster.bench.driver.Driver;
import io.roster.bench.driver.Drivers;
import io.roster.bench.driver.Endpoint;
import io.roster.bench.driver.RosterDriver;
import io.roster.server.testing.process.ServerProcess;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * admin: the admin API and the console over a registry of {@code --admin-services} services (one
 * instance each). Times the service list's pages (first, middle, a search, the largest page) and
 * the namespaces and connections routes over HTTP; then, where Chromium and playwright-core are
 * installed (make tools), the console's first paint of the service list and how long a
 * registration takes to show on an open service page (change → screen).
 */
final class AdminPages {

  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final Path PLAYWRIGHT = Path.of(".tools/node_modules/playwright-core/index.mjs").toAbsolutePath();
  private static final Path SCRIPT = Path.of("integration-tests/src/test/js/console.mjs").toAbsolutePath();

  private AdminPages() {}

  static Result run(Args args, Path jar, Path logDir) throws Exception {
    int services = args.size("admin-services");
    int calls = args.size("admin-calls");
    Result r = new Result("admin", String.format("Admin API and console over %,d services: %d calls per route, "
        + "then the console in headless Chromium", services, calls));
    ServerProcess server = LocalServer.withHttpPort(jar, args.serverJvm, logDir, "admin");
    int port = server.port;
    String base = "http://127.0.0.1:" + (port - 1000);
    try (Driver driver = Drivers.create("roster", "127.0.0.1:" + port, RosterDriver.MassMode.SDK, null, "")) {
      register(driver, services);
      HttpClient http = HttpClient.newHttpClient();
      Map<String, String> routes = new LinkedHashMap<>();
      routes.put("service list, page 1 of 20", "/nacos/v3/admin/ns/service/list?pageNo=1&pageSize=20");
      routes.put("service list, a middle page of 20", "/nacos/v3/admin/ns/service/list?pageNo=" + (services / 40)
          + "&pageSize=20");
      routes.put("service list, a search (serviceNameParam=svc-0004)", "/nacos/v3/admin/ns/service/list?serviceNameParam=svc-0004");
      routes.put("service list, a page of 500", "/nacos/v3/admin/ns/service/list?pageNo=2&pageSize=500");
      routes.put("namespaces", "/roster/v1/admin/namespaces");
      routes.put("instances of one service", "/nacos/v3/admin/ns/instance/list?serviceName=svc-00001");
      for (Map.Entry<String, String> route : routes.entrySet()) {
        HttpRequest get = HttpRequest.newBuilder(URI.create(base + route.getValue())).build();
        for (int i = 0; i < 20; i++) { // warm-up, not measured
          http.send(get, BodyHandlers.discarding());
        }
        List<Long> nanos = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
          long t0 = System.nanoTime();
          int status = http.send(get, BodyHandlers.ofString()).statusCode();
          nanos.add(System.nanoTime() - t0);
          if (status != 200) {
            throw new IllegalStateException(route.getValue() + " answered " + status);
          }
        }
        Stats st = Stats.ofNanosAsMillis(nanos);
        r.row("GET " + route.getKey(), st.format("ms"), "p99 < 50 ms", st.p99() < 50);
      }
      console(r, base);
    } finally {
      server.close();
    }
    return r;
  }

  /** One instance in each of {@code services} services, from 4 clients at once. */
  private static void register(Driver driver, int services) throws InterruptedException {
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      int from = t;
      BenchClient client = driver.client("admin-provider-" + t);
      Thread thread = new Thread(() -> {
        for (int i = from; i < services; i += 4) {
          client.register(String.format("svc-%05d", i), new Endpoint("10.8.0." + (1 + i % 200), 8000 + i % 1000));
        }
      }, "admin-register-" + t);
      thread.start();
      threads.add(thread);
    }
    for (Thread t : threads) {
      t.join();
    }
  }

  private static void console(Result r, String base) throws Exception {
    if (!Files.isExecutable(CHROMIUM) || !Files.exists(PLAYWRIGHT) || !Files.exists(SCRIPT)) {
      r.note("console not measured: it needs " + CHROMIUM + ", playwright-core under .tools (make tools) and "
          + "the bench run from the repository's root");
      return;
    }
    ProcessBuilder pb = new ProcessBuilder("node", SCRIPT.toString(), "measure", base, System.getProperty("java.io.tmpdir"))
        .redirectErrorStream(true);
    pb.environment().put("ROSTER_PLAYWRIGHT", PLAYWRIGHT.toString());
    pb.environment().put("ROSTER_CHROMIUM", CHROMIUM.toString());
    pb.environment().put("ROSTER_SERVICE", "svc-00001");
    pb.environment().put("ROSTER_CHANGES", "30");
    Process p = pb.start();
    List<Long> paint = new ArrayList<>();
    List<Long> fromCall = new ArrayList<>();
    List<Long> fromAnswer = new ArrayList<>();
    StringBuilder out = new StringBuilder();
    try (BufferedReader lines = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = lines.readLine()) != null; ) {
        out.append(line).append('\n');
        String[] f = line.split(" ", -1);
        if (f[0].equals("FIRSTPAINT")) {
          paint.add(millisAsNanos(f[1]));
        } else if (f[0].equals("CHANGE")) {
          fromCall.add(millisAsNanos(f[1]));
          fromAnswer.add(millisAsNanos(f[2]));
        }
      }
    }
    if (p.waitFor() != 0 || paint.isEmpty() || fromCall.isEmpty()) {
      throw new IllegalStateException("the console's measurement failed:\n" + out);
    }
    Stats first = Stats.ofNanosAsMillis(paint);
    r.row("console: first paint of the service list (goto → first row)", first.format("ms"), "< 1000 ms",
        first.max() < 1000);
    Stats change = Stats.ofNanosAsMillis(fromAnswer);
    r.row("console: registration answered → row on the open service page", change.format("ms"), "p99 < 100 ms",
        change.p99() < 100);
    r.row("console: registration sent → row on the page", Stats.ofNanosAsMillis(fromCall).format("ms"));
  }

  private static long millisAsNanos(String ms) {
    return Math.round(Double.parseDouble(ms) * 1_000_000);
  }
}
