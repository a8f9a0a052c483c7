package io.roster.server.rpc;

import io.grpc.MethodDescriptor;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import io.roster.server.time.Scheduler;
import java.io.InputStream;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * xDS's share of the start's priming (see {@link GrpcEndpoint#primeXds}): one ADS exchange through
 * a scratch {@link XdsService}, each request and answer through the method's own marshallers as
 * the transport would, so that a fresh server's first xDS client does not pay for loading and
 * initialising the Envoy messages, their descriptors and {@code Any}'s packing. Runs on the
 * primer's thread; the answers may come on the scheduler's.
 */
final class XdsPriming {

  /** How long it waits for an answer; they come within milliseconds. */
  private static final long WAIT_MS = 2000;

  private XdsPriming() {}

  /**
   * Asks for {@code service}'s listener, cluster and assignment, ACKs them, runs {@code change}
   * (a change of the service's instances) and waits for the assignment it pushes.
   *
   * @return what it saw, as {@code xds: LDS 1, CDS 1, EDS n, pushed EDS m} (resources, localities)
   * @throws IllegalStateException when an answer did not come or was not what a client would see
   */
  static String run(Registry registry, Scheduler scheduler, ServiceKey service, Callable<?> change) throws Exception {
    XdsService xds = new XdsService(registry, scheduler, Readiness.ready());
    registry.addListener(xds);
    MethodDescriptor<DiscoveryRequest, DiscoveryResponse> method =
        AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod();
    Answers answers = new Answers(method);
    StreamObserver<DiscoveryRequest> requests = xds.streamAggregatedResources(answers);
    String name = service.namespace() + "/" + service.group() + "/" + service.name();
    StringBuilder seen = new StringBuilder("xds:");
    DiscoveryResponse last = null;
    for (String type : new String[] {XdsService.LISTENER, XdsService.CLUSTER, XdsService.ENDPOINTS}) {
      requests.onNext(method.parseRequest(method.streamRequest(
          DiscoveryRequest.newBuilder().setTypeUrl(type).addResourceNames(name).build())));
      last = answers.next(type);
      requests.onNext(method.parseRequest(method.streamRequest(DiscoveryRequest.newBuilder().setTypeUrl(type)
          .addResourceNames(name).setVersionInfo(last.getVersionInfo()).setResponseNonce(last.getNonce()).build())));
      seen.append(seen.length() > 4 ? ", " : " ").append(label(type)).append(' ').append(last.getResourcesCount());
    }
    int before = XdsResources.assignment(name, registry.snapshot(service)).getEndpointsCount();
    change.call();
    DiscoveryResponse pushed = answers.next(XdsService.ENDPOINTS);
    seen.append(", pushed EDS ").append(pushed.getResourcesCount());
    requests.onCompleted();
    registry.removeListener(xds);
    if (before == 0 || pushed.getResourcesCount() != 1) {
      throw new IllegalStateException("the xDS priming saw " + seen + " with " + before + " localities");
    }
    return seen.toString();
  }

  private static String label(String type) {
    return type.equals(XdsService.LISTENER) ? "LDS" : type.equals(XdsService.CLUSTER) ? "CDS" : "EDS";
  }

  /** The stream's response side: each answer serialised and parsed back, handed to the primer. */
  private static final class Answers extends ServerCallStreamObserver<DiscoveryResponse> {
    private final MethodDescriptor<DiscoveryRequest, DiscoveryResponse> method;
    private final BlockingQueue<DiscoveryResponse> received = new ArrayBlockingQueue<>(8);

    Answers(MethodDescriptor<DiscoveryRequest, DiscoveryResponse> method) {
      this.method = method;
    }

    DiscoveryResponse next(String type) throws InterruptedException {
      DiscoveryResponse r = received.poll(WAIT_MS, TimeUnit.MILLISECONDS);
      if (r == null || !r.getTypeUrl().equals(type)) {
        throw new IllegalStateException("the xDS priming expected an answer of " + type + ", got "
            + (r == null ? "none within " + WAIT_MS + " ms" : r.getTypeUrl()));
      }
      return r;
    }

    @Override
    public void onNext(DiscoveryResponse value) {
      InputStream wire = method.streamResponse(value);
      if (!received.offer(method.parseResponse(wire))) {
        throw new IllegalStateException("the xDS priming's answers were not taken");
      }
    }

    @Override
    public void onError(Throwable t) {
      received.clear();
    }

    @Override
    public void onCompleted() {}

    @Override
    public boolean isCancelled() {
      return false;
    }

    @Override
    public void setOnCancelHandler(Runnable onCancelHandler) {}

    @Override
    public void setCompression(String compression) {}

    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public void setOnReadyHandler(Runnable onReadyHandler) {}

    @Override
    public void disableAutoInboundFlowControl() {}

    @Override
    public void request(int count) {}

    @Override
    public void setMessageCompression(boolean enable) {}
  }
}
