package io.roster.server.rpc;

import io.grpc.stub.StreamObserver;
import io.roster.proto.v1.AdminGrpc;
import io.roster.proto.v1.ConnectionInfo;
import io.roster.proto.v1.ListConnectionsRequest;
import io.roster.proto.v1.ListConnectionsResponse;
import io.roster.server.session.Session;
import io.roster.server.session.SessionInfo;
import io.roster.server.session.SessionManager;

/** {@code roster.v1.Admin}: introspection for operators. */
final class AdminService extends AdminGrpc.AdminImplBase {

  private final SessionManager sessions;

  AdminService(SessionManager sessions) {
    this.sessions = sessions;
  }

  @Override
  public void listConnections(ListConnectionsRequest req, StreamObserver<ListConnectionsResponse> out) {
    ListConnectionsResponse.Builder b = ListConnectionsResponse.newBuilder();
    for (Session s : sessions.all()) {
      SessionInfo i = s.info();
      if (!req.getClientId().isEmpty() && !req.getClientId().equals(i.clientId())) {
        continue;
      }
      b.addConnections(ConnectionInfo.newBuilder()
          .setConnectionId(i.connectionId())
          .setClientId(i.clientId())
          .setNamespace(i.namespace())
          .setRemoteAddress(i.remoteAddress())
          .setClientName(i.clientName())
          .setClientVersion(i.clientVersion())
          .setConnectedAtMs(i.connectedAtMillis())
          .setInstanceCount(s.instanceCount())
          .setSubscriptionCount(s.subscriptionCount())
          .setUnackedPushes(s.unackedPushes())
          .putAllLabels(i.labels()));
    }
    out.onNext(b.build());
    out.onCompleted();
  }
}
