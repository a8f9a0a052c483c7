package io.roster.server.nacos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.MetadataUtils;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.server.auth.Authenticator;
import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Guessing, over real sockets on every port at once (decision 79): a flood of bad logins and bad
 * tokens from 127.0.0.1 slows only the guesses. A valid static token still works on the Roster
 * protocol (a Registry call, a session's hello), on the Nacos gRPC protocol and on HTTP; gRPC
 * health answers; a user who logged in from the host before logs in again; the guessed user gets
 * 429 with {@code Retry-After}. A removed token is refused as revoked and never counts against its
 * host; a password change ends the sessions its old access tokens opened.
 */
class GuessingTest {

  private static final String PASSWORD = "correct horse battery";
  private static final Duration WAIT = TestTime.seconds(30);
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults().startedByTest();

  @TempDir Path dir;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(WAIT).build();
  private AuthFiles auth;
  private String admin;
  private String ci;

  @BeforeEach
  void setUp() {
    auth = AuthFiles.create(dir.resolve("auth.json")).user("ops", PASSWORD, "admin@*")
        .user("app", PASSWORD, "write@public").user("dev", PASSWORD, "read@*");
    admin = auth.token("admin", "admin@*");
    ci = auth.token("ci", "read@*");
    loopback.start(b -> b.authFile(auth.path()).httpPort(0));
  }

  @Test
  void aFloodOfBadLoginsAndTokensFromAHostSlowsOnlyTheGuesses() throws Exception {
    assertThat(login("app", PASSWORD).statusCode()).as("app has logged in from this host before").isEqualTo(200);
    for (int i = 0; i < 5; i++) {
      assertThat(login("ops", "guess " + i).statusCode()).isEqualTo(403);
    }
    for (int i = 0; i < 25; i++) {
      assertThat(login("sprayed-" + i, "guess " + i).statusCode()).isEqualTo(403);
    }
    // 200 more guesses at once, and 200 bad tokens on every protocol.
    List<CompletableFuture<HttpResponse<String>>> flood = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      flood.add(loginAsync(i % 4 == 0 ? "ops" : "sprayed-" + i, "another guess " + i));
    }
    NacosConn badNacos = new NacosConn(loopback).setup().as("rst_guessed");
    for (int i = 0; i < 200; i++) {
      String bad = "rst_guess-" + i;
      switch (i % 3) {
        case 0 -> assertThat(get("/nacos/v1/ns/instance/list?serviceName=orders", bad).statusCode()).isEqualTo(403);
        case 1 -> assertThat(Envelope.body(badNacos.call("ServiceListRequest", "{\"headers\":{},\"namespace\":"
            + "\"public\",\"groupName\":\"DEFAULT_GROUP\",\"pageNo\":1,\"pageSize\":10,\"module\":\"naming\"}"))
            .path("errorCode").asInt()).isEqualTo(Envelope.NO_RIGHT);
        default -> assertThat(helloResult(loopback.open(), bad))
            .isEqualTo("hello.token: refused: a token the auth file does not list");
      }
    }
    for (CompletableFuture<HttpResponse<String>> f : flood) {
      HttpResponse<String> r = f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      assertThat(r.statusCode()).as(r.body()).isEqualTo(429);
      assertThat(r.headers().firstValue("Retry-After")).isPresent();
    }

    // The guessed user, and a user who never logged in from this host, are refused unchecked ...
    HttpResponse<String> guessed = login("ops", PASSWORD);
    assertThat(guessed.statusCode()).as(guessed.body()).isEqualTo(429);
    assertThat(guessed.body()).startsWith("password: 5 failed logins of \"ops\" from 127.0.0.1 within 60 s");
    assertThat(Long.parseLong(guessed.headers().firstValue("Retry-After").orElseThrow())).isBetween(1L, 60L);
    HttpResponse<String> unproven = login("dev", PASSWORD);
    assertThat(unproven.statusCode()).isEqualTo(429);
    assertThat(unproven.headers().firstValue("Retry-After")).isPresent();
    // ... while one who logged in from it before logs in,
    HttpResponse<String> proven = login("app", PASSWORD);
    assertThat(proven.statusCode()).as(proven.body()).isEqualTo(200);
    String appToken = NacosMapping.JSON.readTree(proven.body()).get("accessToken").asText();
    assertThat(get("/nacos/v1/ns/instance/list?serviceName=orders", appToken).statusCode()).isEqualTo(200);

    // and a valid static token works on every port and protocol, over connections old and new.
    assertThat(get("/nacos/v1/ns/instance/list?serviceName=orders", admin).statusCode()).isEqualTo(200);
    NacosConn nacos = new NacosConn(loopback).setup().as(admin);
    assertThat(Envelope.body(nacos.call("InstanceRequest", NacosConn.register("orders", "10.0.0.1", 80)))
        .path("success").asBoolean()).isTrue();
    TestSession session = loopback.open(loopback.newChannel());
    assertThat(session.helloFrame(Hello.newBuilder().setClientId("valid").setToken(admin)).hasWelcome()).isTrue();
    assertThat(RegistryGrpc.newBlockingStub(loopback.newChannel()).withInterceptors(bearer(admin))
        .queryInstances(QueryInstancesRequest.newBuilder().setService(ServiceKey.newBuilder().setName("orders"))
            .build()).getServiceInfo().getInstancesCount()).isEqualTo(1);
    assertThat(HealthGrpc.newBlockingStub(loopback.newChannel()).check(HealthCheckRequest.getDefaultInstance())
        .getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
    Authenticator authenticator = loopback.server().sessions().authenticator();
    assertThat(authenticator.loginsThrottled()).isEqualTo(202);
    assertThat(authenticator.failures()).isEqualTo(30 + 200);
  }

  @Test
  void aRemovedTokenIsRefusedAsRevokedAndNeverCountsAgainstItsHost() throws Exception {
    assertThat(get("/nacos/v1/ns/instance/list?serviceName=orders", ci).statusCode()).isEqualTo(200);
    auth.remove("ci");
    Authenticator authenticator = loopback.server().sessions().authenticator();
    await().atMost(WAIT).until(() -> get("/nacos/v1/ns/instance/list?serviceName=orders", ci).statusCode() == 403);

    // An application left running with it: it asks again and again.
    for (int i = 0; i < 200; i++) {
      HttpResponse<String> r = get("/nacos/v1/ns/instance/list?serviceName=orders", ci);
      assertThat(r.statusCode()).isEqualTo(403);
      assertThat(r.body()).startsWith("accessToken: refused: revoked: token \"ci\" was removed from the auth file at ");
    }
    assertThat(helloResult(loopback.open(), ci)).startsWith("hello.token: refused: revoked: token \"ci\" was removed");

    assertThat(authenticator.failures()).isZero();
    assertThat(authenticator.revokedRefused()).isGreaterThanOrEqualTo(201);
    assertThat(login("dev", PASSWORD).statusCode()).isEqualTo(200);
    assertThat(get("/nacos/v1/ns/instance/list?serviceName=orders", admin).statusCode()).isEqualTo(200);
  }

  @Test
  void aPasswordChangeEndsTheSessionsAndConnectionsOfTheOldPasswordsTokens() throws Exception {
    HttpResponse<String> r = login("ops", PASSWORD);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    String token = NacosMapping.JSON.readTree(r.body()).get("accessToken").asText();
    TestSession session = loopback.open();
    assertThat(session.helloFrame(Hello.newBuilder().setClientId("ops-tool").setToken(token)).hasWelcome()).isTrue();
    NacosConn nacos = new NacosConn(loopback).setup().as(token);
    assertThat(Envelope.body(nacos.call("InstanceRequest", NacosConn.register("orders", "10.0.0.7", 80)))
        .path("success").asBoolean()).isTrue();

    auth.user("ops", "a new password for ops", "admin@*");

    Status ended = session.awaitClosed();
    assertThat(ended.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(ended.getDescription()).contains("\"ops\" was revoked: the password of \"ops\" changed at ");
    await().atMost(WAIT).until(() -> nacos.streamEnded);
    assertThat(instances()).doesNotContain("10.0.0.7:80");
    HttpResponse<String> old = get("/nacos/v1/ns/instance/list?serviceName=orders", token);
    assertThat(old.statusCode()).isEqualTo(403);
    assertThat(old.body()).startsWith("accessToken: refused: revoked: the password of \"ops\" changed at ");
    assertThat(login("ops", "a new password for ops").statusCode()).isEqualTo(200);
  }

  private List<String> instances() {
    return loopback.server().registry().snapshot(io.roster.server.model.ServiceKey.of("", "", "orders")).instances()
        .stream().map(i -> i.ip() + ":" + i.port()).sorted().toList();
  }

  private HttpResponse<String> login(String user, String password) throws Exception {
    return loginAsync(user, password).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }

  private CompletableFuture<HttpResponse<String>> loginAsync(String user, String password) {
    return http.sendAsync(HttpRequest.newBuilder(uri(NacosLogin.V1 + "?username=" + user))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .POST(HttpRequest.BodyPublishers.ofString("password=" + URLEncoder.encode(password, StandardCharsets.UTF_8)))
        .timeout(WAIT).build(), BodyHandlers.ofString());
  }

  private HttpResponse<String> get(String pathAndQuery, String token) throws Exception {
    return http.send(HttpRequest.newBuilder(uri(pathAndQuery + "&accessToken=" + URLEncoder.encode(token,
        StandardCharsets.UTF_8))).timeout(WAIT).build(), BodyHandlers.ofString());
  }

  private URI uri(String pathAndQuery) {
    return URI.create("http://127.0.0.1:" + loopback.server().httpPort() + pathAndQuery);
  }

  private static io.grpc.ClientInterceptor bearer(String token) {
    Metadata m = new Metadata();
    m.put(AUTHORIZATION, "Bearer " + token);
    return MetadataUtils.newAttachHeadersInterceptor(m);
  }

  /** Says hello with {@code token} and returns the refusal's message. */
  private static String helloResult(TestSession s, String token) {
    String id = s.nextId();
    s.send(ClientFrame.newBuilder().setRequestId(id).setHello(Hello.newBuilder().setClientId("guesser").setToken(token))
        .build());
    return s.await(f -> f.getRequestId().equals(id)).getResult().getMessage();
  }
}
