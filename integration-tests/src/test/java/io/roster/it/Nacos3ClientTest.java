package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.TestPki;
import io.roster.server.testing.process.ServerLauncher;
import io.roster.server.testing.process.JavaProcess;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * nacos-client 3.1.1 (module nacos3-client, in a child JVM: one test classpath cannot hold two
 * nacos-client versions) against Roster server processes: without auth it registers, subscribes,
 * is pushed, queries, lists and deregisters unchanged, and its fuzzy watch is refused by the client
 * itself (Roster does not advertise the ability); with auth on ({@code --auth-file}) it does
 * the same given {@code username} and {@code password} (its login tries Nacos 3's {@code
 * /nacos/v3/auth/user/login} first), and without them, or with a wrong password, its registration
 * is refused with 403; over mutual TLS, configured with Nacos's own {@code
 * nacos.remote.client.rpc.tls.*} properties, it works as over plaintext, and with auth on it
 * logs in over HTTPS.
 */
class Nacos3ClientTest {

  private static final Path DIR = Path.of(System.getProperty("roster.nacos3.dir", "../nacos3-client/target"));
  private static final String PASSWORD = "a password of the app";

  private static Path cache;
  private static ServerProcess open;
  private static ServerProcess secured;

  @BeforeAll
  static void startServers() throws Exception {
    cache = Files.createTempDirectory("nacos3-client");
    AuthFiles auth = AuthFiles.create(cache.resolve("auth.json")).user("app", PASSWORD, "write@public");
    // serverAddr's own port (the gRPC port - 1000) is where the client logs in: the HTTP port.
    open = ServerProcess.start("127.0.0.1", Ports.freeForNacos(), "--http-port", "auto");
    secured = ServerProcess.start("127.0.0.1", Ports.freeForNacos(), "--http-port", "auto", "--auth-file", auth.path().toString());
  }

  @AfterAll
  static void stopServers() throws Exception {
    if (open != null) {
      open.close();
    }
    if (secured != null) {
      secured.close();
    }
  }


  @Test
  void withoutAuthItWorksUnchanged() throws Exception {
    run(open, "works").contains("STEP pushed shutDown: empty").contains("STEP persistent outlives its client")
        .contains("STEP persistent deregistered").contains("STEP fuzzyWatch refused "
        + "NacosRuntimeException: errCode: 501, errMsg: Request Nacos server version is too low, not support fuzzy "
        + "watch feature.");
  }

  @Test
  void withAuthAndCredentialsItRegistersDiscoversAndIsPushed() throws Exception {
    run(secured, "works", "app", PASSWORD).contains("STEP getServicesOfServer");
  }

  @Test
  void withAuthButWithoutCredentialsOrWithAWrongPasswordItIsRefused() throws Exception {
    run(secured, "refused").contains("STEP registerInstance refused 403: InstanceRequest: accessToken: missing");
    run(secured, "refused", "app", "not the password at all").contains("STEP registerInstance refused 403");
  }

  @Test
  void overMutualTlsItWorksWithNacossOwnTlsProperties() throws Exception {
    TestPki pki = TestPki.in(Files.createTempDirectory(cache, "pki"));
    Path[] app = pki.client(pki.ca, "nacos3-app");
    try (ServerProcess tls = ServerLauncher.forTests().withProbe(pki.credentials(true))
        .start("127.0.0.1", Ports.freeForNacos(), pki.flags(true).toArray(String[]::new))) {
      // As Nacos documents them; read from system properties as from the client's Properties.
      List<String> nacosTls = List.of("-Dnacos.remote.client.rpc.tls.enable=true",
          "-Dnacos.remote.client.rpc.tls.trustCollectionChainPath=file:" + pki.caPem,
          "-Dnacos.remote.client.rpc.tls.mutualAuth=true",
          "-Dnacos.remote.client.rpc.tls.certChainFile=file:" + app[0],
          "-Dnacos.remote.client.rpc.tls.certPrivateKey=file:" + app[1]);
      run(address(tls), nacosTls, "works").contains("STEP pushed shutDown: empty");
    }
  }

  @Test
  void withAuthOverTlsItLogsInOverHttps() throws Exception {
    TestPki pki = TestPki.in(Files.createTempDirectory(cache, "pki"));
    AuthFiles auth = AuthFiles.create(cache.resolve("auth-tls.json")).user("app", PASSWORD, "write@public");
    List<String> flags = new ArrayList<>(pki.flags(false));
    flags.addAll(List.of("--http-port", "auto", "--auth-file", auth.path().toString()));
    try (ServerProcess tls = ServerLauncher.forTests().withProbe(pki.credentials(false))
        .start("127.0.0.1", Ports.freeForNacos(), flags.toArray(String[]::new))) {
      // gRPC: nacos.remote.client.rpc.tls.*; the login, over HTTP: an https:// serverAddr, and the
      // tls.* system properties of Nacos's HTTP client.
      List<String> nacosTls = List.of("-Dnacos.remote.client.rpc.tls.enable=true",
          "-Dnacos.remote.client.rpc.tls.trustCollectionChainPath=file:" + pki.caPem,
          "-Dtls.enable=true", "-Dtls.client.trustCertPath=" + pki.caPem);
      run("https://" + address(tls), nacosTls, "works", "app", PASSWORD).contains("STEP getServicesOfServer");
    }
  }

  private static org.assertj.core.api.AbstractStringAssert<?> run(ServerProcess server, String... args)
      throws Exception {
    return run(address(server), List.of(), args);
  }

  /** The {@code serverAddr} of {@code server}: its HTTP port (the gRPC port - 1000). */
  private static String address(ServerProcess server) {
    return "127.0.0.1:" + (server.port - 1000);
  }

  private static org.assertj.core.api.AbstractStringAssert<?> run(String serverAddr, List<String> jvmArgs,
      String... args) throws Exception {
    Path classpathFile = DIR.resolve("nacos3-classpath.txt");
    assertThat(classpathFile).as("built by module nacos3-client (mvn package)").exists();
    String classpath = DIR.resolve("classes") + java.io.File.pathSeparator + Files.readString(classpathFile).trim();
    try (Client client = new Client(classpath, serverAddr, jvmArgs, args)) {
      await().atMost(Timing.seconds(60)).until(() -> !client.isAlive());
      assertThat(client.output()).as(client.output()).contains("STEP version 3.1.1").contains("\nOK");
      assertThat(client.process.exitValue()).isZero();
      return assertThat(client.output());
    }
  }

  /** Nacos3Main in a child JVM on nacos-client 3.x's classpath. */
  private static final class Client extends JavaProcess {
    Client(String classpath, String serverAddr, List<String> jvmArgs, String... args) throws IOException {
      super("nacos3", command(classpath, serverAddr, jvmArgs, args));
    }

    private static List<String> command(String classpath, String serverAddr, List<String> jvmArgs, String... args) {
      List<String> c = new ArrayList<>(jvmArgs);
      c.addAll(List.of("-Xmx96m", "-DJM.SNAPSHOT.PATH=" + cache,
          "-DJM.LOG.PATH=" + cache.resolve("logs"), "-cp", classpath, "io.roster.it.nacos3.Nacos3Main", serverAddr,
          Long.toString(Timing.seconds(20).toMillis()), args[0]));
      c.addAll(List.of(args).subList(1, args.length));
      return c;
    }
  }
}
