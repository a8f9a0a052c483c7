package io.roster.server.model;

/** Identity of an instance inside one service: (ip, port, cluster). */
public record InstanceKey(String ip, int port, String cluster) implements Comparable<InstanceKey> {

  @Override
  public int compareTo(InstanceKey o) {
    int c = ip.compareTo(o.ip);
    if (c != 0) {
      return c;
    }
    c = Integer.compare(port, o.port);
    return c != 0 ? c : cluster.compareTo(o.cluster);
  }

  @Override
  public String toString() {
    return ip + ":" + port + "/" + cluster;
  }
}
