package io.roster.bench.driver;

/**
 * One instance as the workloads see it: an address, registered in the default group and
 * cluster with default settings (weight 1, enabled, ephemeral). Both drivers map it to their
 * own instance type.
 *
 * @param ip address, e.g. {@code 10.0.3.7}
 * @param port TCP port, 1..65535
 */
public record Endpoint(String ip, int port) {

  public Endpoint {
    if (ip == null || ip.isEmpty()) {
      throw new IllegalArgumentException("ip: \"" + ip + "\" (expected: a non-empty address)");
    }
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port: " + port + " (expected: 1..65535)");
    }
  }

  @Override
  public String toString() {
    return ip + ":" + port;
  }
}
