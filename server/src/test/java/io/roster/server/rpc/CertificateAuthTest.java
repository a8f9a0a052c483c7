package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ErrorCode;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegisterInstance;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServiceInfo;
import io.roster.proto.v1.ServiceKey;
import io.roster.proto.v1.UpdateInstanceRequest;
import io.roster.proto.v1.WatchRequest;
import io.roster.server.RosterServer;
import io.roster.server.config.ServerConfig;
import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.TestPki;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import io.roster.server.tls.Pki;
import io.roster.server.tls.TlsFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Client certificates as identities over real sockets (decision 80): a server with {@code
 * --auth-file} and mutual TLS takes a client certificate whose SAN the auth file lists as that
 * identity, with its grants, on every protocol of the client port and on the HTTP port; a token
 * wins over it; a certificate the file does not map is no identity; and removing its entry ends
 * its sessions and long-lived calls.
 */
class CertificateAuthTest {

  private static final Duration WAIT = TestTime.seconds(10);
  private static final String FRONTEND = "spiffe://corp.example/ns/prod/sa/frontend";
  private static final String PROVIDER = "orders-1.corp.example";

  @TempDir Path dir;
  private final Pki.Authority ca = Pki.newAuthority("roster-test-ca");
  private Path caFile;
  private AuthFiles auth;
  private String ops;
  private RosterServer server;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final AtomicInteger clients = new AtomicInteger();

  @BeforeEach
  void start() throws IOException {
    caFile = dir.resolve("ca.crt");
    ca.writeCertificatePem(caFile);
    Path cert = dir.resolve("server.crt");
    Path key = dir.resolve("server.key");
    ca.issue("roster-server", List.of("127.0.0.1", "localhost")).writePem(cert, key);
    auth = AuthFiles.create(dir.resolve("auth.json"));
    ops = auth.token("ops", "admin@*");
    auth.certificate("frontend", FRONTEND, "read@prod/orders-*");
    auth.certificate("orders-provider", PROVIDER, "write@prod/orders-*");
    server = RosterServer.start(ServerConfig.builder().dataDir(null).host("127.0.0.1").port(0).httpPort(0)
        .shutdownGrace(Duration.ofMillis(200)).warmUp(Duration.ZERO).tls(new TlsFiles(cert, key, caFile))
        .authFile(auth.path()).build());
  }

  @AfterEach
  void stop() {
    channels.forEach(ManagedChannel::shutdownNow);
    server.close();
  }

  @Test
  void aRegistryCallWithOnlyAClientCertificateIsTheIdentityItsSanMapsToWithItsGrants() {
    TestSession provider = session(PROVIDER);
    assertThat(register(provider, "orders-eu", "10.0.0.1").getOk()).isTrue();
    Result denied = register(provider, "payments", "10.0.0.2");
    assertThat(denied.getCode()).isEqualTo(ErrorCode.ERROR_CODE_PERMISSION_DENIED);
    assertThat(denied.getMessage()).isEqualTo(
        "\"orders-provider\" lacks permission write on namespace \"prod\", service \"DEFAULT_GROUP@@payments\"");

    RegistryGrpc.RegistryBlockingStub frontend = RegistryGrpc.newBlockingStub(channel(FRONTEND));
    assertThat(frontend.queryInstances(query("orders-eu")).getServiceInfo().getInstancesList())
        .extracting(Instance::getIp).containsExactly("10.0.0.1");
    assertThatThrownBy(() -> frontend.queryInstances(query("payments")))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
          assertThat(e.getStatus().getDescription())
              .isEqualTo("\"frontend\" lacks permission read on namespace \"prod\", service \"DEFAULT_GROUP@@payments\"");
        });
    assertThatThrownBy(() -> frontend.updateInstance(UpdateInstanceRequest.newBuilder().setService(key("orders-eu"))
        .setIp("10.0.0.1").setPort(80).setEnabled(false).build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
    assertThat(frontend.queryInstances(query("orders-eu")).getServiceInfo().getInstances(0).getEnabled()).isTrue();

    // A token wins over the certificate.
    assertThat(frontend.withInterceptors(bearer(ops)).queryInstances(query("payments")).getServiceInfo()
        .getInstancesCount()).isZero();
  }

  @Test
  void aCertificateThatMapsToNoIdentityIsUnauthenticatedNamingWhatWasMissingAndItsSans() {
    ManagedChannel stranger = channel("spiffe://corp.example/ns/dev/sa/x");

    assertThatThrownBy(() -> RegistryGrpc.newBlockingStub(stranger).queryInstances(query("orders-eu")))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
          assertThat(e.getStatus().getDescription()).isEqualTo("authorization: missing (expected: a token, or a client "
              + "certificate the auth file maps to an identity; this certificate's SANs map to no identity: "
              + "URI:spiffe://corp.example/ns/dev/sa/x; see docs/security.md)");
        });
    TestSession s = new TestSession(stranger);
    String id = s.nextId();
    s.send(ClientFrame.newBuilder().setRequestId(id).setHello(Hello.newBuilder().setClientId("stranger")).build());
    Result r = s.await(f -> f.getRequestId().equals(id)).getResult();
    assertThat(r.getCode()).isEqualTo(ErrorCode.ERROR_CODE_UNAUTHENTICATED);
    assertThat(r.getMessage()).startsWith("hello.token: missing (expected: a token, or a client certificate")
        .contains("URI:spiffe://corp.example/ns/dev/sa/x");
  }

  @Test
  void anAdsStreamIsCheckedAgainstTheCertificatesIdentity() throws Exception {
    Ads ads = ads(channel(FRONTEND));
    ads.requests.onNext(DiscoveryRequest.newBuilder().setTypeUrl(XdsService.LISTENER)
        .addResourceNames("prod/DEFAULT_GROUP/orders-eu").build());
    assertThat(ads.responses.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("a listener").isNotNull();

    ads.requests.onNext(DiscoveryRequest.newBuilder().setTypeUrl(XdsService.LISTENER)
        .addResourceNames("prod/DEFAULT_GROUP/orders-eu").addResourceNames("prod/DEFAULT_GROUP/payments").build());
    Status ended = Status.fromThrowable(ads.ended.get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
    assertThat(ended.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(ended.getDescription())
        .isEqualTo("\"frontend\" lacks permission read on namespace \"prod\", service \"DEFAULT_GROUP@@payments\"");
  }

  @Test
  void removingACertificateEntryEndsItsSessionsWatchesAndAdsStreamsAtTheNextCheck() throws Exception {
    TestSession provider = session(PROVIDER);
    assertThat(register(provider, "orders-eu", "10.0.0.1").getOk()).isTrue();
    ManagedChannel frontend = channel(FRONTEND);
    CompletableFuture<Throwable> watchEnded = new CompletableFuture<>();
    List<ServiceInfo> watched = new java.util.concurrent.CopyOnWriteArrayList<>();
    RegistryGrpc.newStub(frontend).watch(WatchRequest.newBuilder().setService(key("orders-eu")).build(),
        new StreamObserver<>() {
          @Override
          public void onNext(ServiceInfo value) {
            watched.add(value);
          }

          @Override
          public void onError(Throwable t) {
            watchEnded.complete(t);
          }

          @Override
          public void onCompleted() {
            watchEnded.complete(null);
          }
        });
    Ads ads = ads(frontend);
    ads.requests.onNext(DiscoveryRequest.newBuilder().setTypeUrl(XdsService.ENDPOINTS)
        .addResourceNames("prod/DEFAULT_GROUP/orders-eu").build());
    assertThat(ads.responses.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("an assignment").isNotNull();
    await().atMost(WAIT).until(() -> !watched.isEmpty());

    auth.remove("orders-provider");
    auth.remove("frontend");

    Status session = provider.awaitClosed();
    assertThat(session.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(session.getDescription()).contains("\"orders-provider\"").contains("is no longer in the auth file");
    Status watch = Status.fromThrowable(watchEnded.get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
    assertThat(watch.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(watch.getDescription()).contains("\"frontend\"").contains("is no longer in the auth file");
    Status stream = Status.fromThrowable(ads.ended.get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
    assertThat(stream.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(stream.getDescription()).contains("\"frontend\"").contains("is no longer in the auth file");
    RegistryGrpc.RegistryBlockingStub admin = RegistryGrpc.newBlockingStub(channel(FRONTEND)).withInterceptors(bearer(ops));
    await().atMost(WAIT).until(() -> admin.queryInstances(query("orders-eu")).getServiceInfo().getInstancesCount() == 0);
  }

  @Test
  void theHttpPortTakesTheClientCertificateAsTheIdentityToo() throws Exception {
    assertThat(register(session(PROVIDER), "orders-eu", "10.0.0.1").getOk()).isTrue();
    HttpClient frontend = https(FRONTEND);

    HttpResponse<String> allowed = get(frontend, "orders-eu");
    assertThat(allowed.statusCode()).isEqualTo(200);
    assertThat(allowed.body()).contains("\"ip\":\"10.0.0.1\"");
    HttpResponse<String> denied = get(frontend, "payments");
    assertThat(denied.statusCode()).isEqualTo(403);
    assertThat(denied.body()).contains("\"frontend\" lacks permission read on namespace \"prod\"");
    HttpResponse<String> stranger = get(https("spiffe://corp.example/ns/dev/sa/x"), "orders-eu");
    assertThat(stranger.statusCode()).isEqualTo(403);
    assertThat(stranger.body()).startsWith("accessToken: missing (expected: a token, or a client certificate")
        .contains("URI:spiffe://corp.example/ns/dev/sa/x");
  }

  // --- helpers ---

  /** The files of a client certificate of the test CA with {@code sans}: {cert, key}. */
  private Path[] certificate(String... sans) {
    int n = clients.incrementAndGet();
    Path cert = dir.resolve("client-" + n + ".crt");
    Path key = dir.resolve("client-" + n + ".key");
    try {
      ca.issue("client-" + n, List.of(sans)).writePem(cert, key);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new Path[] {cert, key};
  }

  /** A channel to the client port presenting a certificate with {@code sans}. */
  private ManagedChannel channel(String... sans) {
    Path[] client = certificate(sans);
    try {
      ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port(),
          TlsChannelCredentials.newBuilder().trustManager(caFile.toFile())
              .keyManager(client[0].toFile(), client[1].toFile()).build()).build();
      channels.add(channel);
      return channel;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A session on a channel presenting {@code san}, said hello to without a token, in namespace prod. */
  private TestSession session(String san) {
    TestSession s = new TestSession(channel(san));
    s.helloFrame(Hello.newBuilder().setClientId("client-" + clients.incrementAndGet()).setNamespace("prod"));
    return s;
  }

  private static Result register(TestSession s, String service, String ip) {
    return s.request(ClientFrame.newBuilder().setRegister(RegisterInstance.newBuilder()
        .setService(key(service)).setInstance(Instance.newBuilder().setIp(ip).setPort(80))));
  }

  private static QueryInstancesRequest query(String service) {
    return QueryInstancesRequest.newBuilder().setService(key(service)).build();
  }

  private static ServiceKey key(String service) {
    return ServiceKey.newBuilder().setNamespace("prod").setName(service).build();
  }

  private static io.grpc.ClientInterceptor bearer(String token) {
    Metadata m = new Metadata();
    m.put(Callers.AUTHORIZATION, "Bearer " + token);
    return MetadataUtils.newAttachHeadersInterceptor(m);
  }

  /** An ADS stream: what it was sent, and how it ended. */
  private record Ads(StreamObserver<DiscoveryRequest> requests,
      java.util.concurrent.BlockingQueue<DiscoveryResponse> responses, CompletableFuture<Throwable> ended) {}

  private static Ads ads(ManagedChannel channel) {
    java.util.concurrent.BlockingQueue<DiscoveryResponse> responses = new java.util.concurrent.LinkedBlockingQueue<>();
    CompletableFuture<Throwable> ended = new CompletableFuture<>();
    StreamObserver<DiscoveryRequest> requests = AggregatedDiscoveryServiceGrpc.newStub(channel)
        .streamAggregatedResources(new StreamObserver<>() {
          @Override
          public void onNext(DiscoveryResponse r) {
            responses.add(r);
          }

          @Override
          public void onError(Throwable t) {
            ended.complete(t);
          }

          @Override
          public void onCompleted() {
            ended.complete(Status.OK.asRuntimeException());
          }
        });
    return new Ads(requests, responses, ended);
  }

  /** A JDK HTTPS client trusting the test CA and presenting a certificate with {@code sans}. */
  private HttpClient https(String... sans) throws Exception {
    Path[] client = certificate(sans);
    SSLContext context = TestPki.context(ca.certificate(), Pki.readCertificate(client[0]), Pki.readPrivateKey(client[1]));
    return HttpClient.newBuilder().sslContext(context).connectTimeout(WAIT).build();
  }

  private HttpResponse<String> get(HttpClient client, String service) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + server.httpPort()
        + "/nacos/v1/ns/instance/list?namespaceId=prod&serviceName=" + service)).timeout(WAIT).build(),
        HttpResponse.BodyHandlers.ofString());
  }


}
