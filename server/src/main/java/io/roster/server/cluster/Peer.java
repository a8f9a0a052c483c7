package io.roster.server.cluster;

import io.roster.server.config.ClusterSettings;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * One entry of {@code --members}: {@code host:port} or {@code id=host:port}; the id defaults to
 * {@code host:port}. Every member must list the same ids; the addresses are where this member
 * reaches each one (a test may put a proxy there).
 */
record Peer(String id, String host, int port) {
  static Peer parse(String entry) {
    int eq = entry.indexOf('=');
    String address = entry.substring(eq + 1);
    int colon = address.lastIndexOf(':');
    return new Peer(eq < 0 ? address : entry.substring(0, eq), address.substring(0, colon),
        Integer.parseInt(address.substring(colon + 1)));
  }

  static List<Peer> all(List<String> entries) {
    return entries.stream().map(Peer::parse).toList();
  }

  String address() {
    return host + ":" + port;
  }

  /**
   * This node's entry of {@code --members}: the one whose id is {@code --node-id}, or whose
   * host is, or else the one whose port is {@code --peer-port} on an address of this machine.
   */
  static Peer self(ClusterSettings config) {
    List<Peer> members = Peer.all(config.members());
    String id = config.nodeId();
    for (Peer m : members) {
      if (m.id().equals(id) || m.host().equals(id) || m.address().equals(id)) {
        return m;
      }
    }
    List<Peer> local = new ArrayList<>();
    for (Peer m : members) {
      if (m.port() == config.peerPort() && isLocal(m.host())) {
        local.add(m);
      }
    }
    if (local.size() == 1) {
      return local.get(0);
    }
    throw new IllegalArgumentException("members: none of " + config.members() + " is this node (--node-id \"" + id
        + "\", --peer-port " + config.peerPort() + "); list this node, or set --node-id to its entry's id or host");
  }

  /**
   * Where this member's peer port listens: {@code --peer-host} when given; else {@code --host},
   * unless that is every interface, in which case the host of this member's own {@code --members}
   * entry ({@code self}), where the others reach it. The peer port listens on every interface
   * only when {@code --peer-host} says so.
   */
  static String bindHost(ClusterSettings config, String host, Peer self) {
    if (!config.peerHost().isEmpty()) {
      return config.peerHost();
    }
    return isEveryInterface(host) ? self.host() : host;
  }

  private static boolean isEveryInterface(String host) {
    String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    return h.isEmpty() || h.equals("0.0.0.0") || h.equals("::") || h.equals("0:0:0:0:0:0:0:0");
  }

  /**
   * A member's Raft peer id: its id with ':' as '_' (Ratis names JMX beans after it, and ':' is
   * not allowed there); ids have no '_' after their last ':', so the last '_' maps back.
   */
  static RaftPeerId peerId(String member) {
    int colon = member.lastIndexOf(':');
    return RaftPeerId.valueOf(colon < 0 ? member : member.substring(0, colon) + "_" + member.substring(colon + 1));
  }

  /** The member id of a Raft peer id. */
  static String member(String peerId) {
    int cut = peerId.lastIndexOf('_');
    return cut < 0 || !peerId.substring(cut + 1).matches("[0-9]+") ? peerId
        : peerId.substring(0, cut) + ":" + peerId.substring(cut + 1);
  }

  private static boolean isLocal(String host) {
    try {
      InetAddress a = InetAddress.getByName(host);
      return a.isLoopbackAddress() || a.isAnyLocalAddress() || NetworkInterface.getByInetAddress(a) != null;
    } catch (UnknownHostException | SocketException e) {
      return false;
    }
  }
}
