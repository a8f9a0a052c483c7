package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The console's Manage page in a real headless Chromium (src/test/js/manage.mjs, as {@link
 * ConsoleBrowserTest} runs its script) against a server process under auth: an admin creates a
 * namespace and sees it listed, fails to delete one that has an instance (the refusal shown, the
 * namespace still there), adds a user, and that user logs in. Skipped, saying why, where Chromium
 * or playwright-core is not installed.
 */
class ConsoleManageBrowserTest {

  private static final Path CHROMIUM = Path.of(System.getenv().getOrDefault("ROSTER_CHROMIUM", "/usr/bin/chromium"));
  private static final Path PLAYWRIGHT = Path.of("../.tools/node_modules/playwright-core/index.mjs").toAbsolutePath();
  private static final Path SCRIPT = Path.of("src/test/js/manage.mjs").toAbsolutePath();
  private static final Path SHOTS = Path.of("target/console-screenshots").toAbsolutePath();

  @TempDir Path dir;

  private final Closer closing = new Closer();
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void browserInstalled() throws IOException {
    Assumptions.assumeTrue(Files.isExecutable(CHROMIUM), "no Chromium at " + CHROMIUM
        + " (Debian: apt-get install chromium; or set ROSTER_CHROMIUM): console browser tests skipped");
    Assumptions.assumeTrue(Files.exists(PLAYWRIGHT), "playwright-core not installed under .tools (make tools): "
        + "console browser tests skipped");
    Files.createDirectories(SHOTS);
  }

  @AfterEach
  void close() {
    closing.close();
  }

  private int post(String url) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(url)).POST(HttpRequest.BodyPublishers.noBody()).build(),
        BodyHandlers.ofString()).statusCode();
  }

  @Test
  void anAdminCreatesANamespaceIsRefusedDeletingABusyOneAndAddsAUserWhoLogsIn() throws Exception {
    String adminPassword = "the admin's own password";
    String newPassword = "alice's brand new password";
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json")).user("root", adminPassword, "admin@*");
    String ops = auth.token("ops", "admin@*");
    int port = Ports.freeForNacos();
    ServerProcess server = closing.add(ServerProcess.start("127.0.0.1", port, "--http-port", "auto", "--auth-file",
        auth.path().toString()));
    String base = "http://127.0.0.1:" + (server.port - 1000);
    assertThat(post(base + "/roster/v1/admin/namespaces?namespaceId=busy&namespaceName=Busy&accessToken=" + ops))
        .isEqualTo(200);
    assertThat(post(base + "/nacos/v1/ns/instance?namespaceId=busy&serviceName=orders&ip=10.0.0.1&port=8080"
        + "&accessToken=" + ops)).isEqualTo(200);

    ProcessBuilder pb = new ProcessBuilder("node", SCRIPT.toString(), base, SHOTS.toString()).redirectErrorStream(true);
    pb.environment().put("ROSTER_PLAYWRIGHT", PLAYWRIGHT.toString());
    pb.environment().put("ROSTER_CHROMIUM", CHROMIUM.toString());
    pb.environment().put("ROSTER_ADMIN_PASSWORD", adminPassword);
    pb.environment().put("ROSTER_NEW_PASSWORD", newPassword);
    Process node = pb.start();
    closing.add(node::destroyForcibly);
    assertThat(node.waitFor(Timing.seconds(180).toSeconds(), TimeUnit.SECONDS)).as("the browser script ended").isTrue();
    String output = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

    assertThat(output).contains("STEP MANAGE", "STEP CREATED team-a", "STEP REFUSED busy", "STEP ADDED alice",
        "STEP ALICE", "WITH CREDENTIALS []", "ERRORS []", "DONE");
    assertThat(node.exitValue()).as(output).isZero();
    assertThat(Files.readString(auth.path())).contains("\"alice\"").doesNotContain(newPassword);
    assertThat(server.output()).doesNotContain(adminPassword, newPassword, ops);
  }
}
