package io.roster.bench.driver;

/** Creates a driver by name. */
public final class Drivers {

  private Drivers() {}

  /**
   * @param name {@code roster} or {@code nacos}
   * @param target {@code host:port} of the server
   * @param rosterMass how the roster driver makes many-client workloads' clients
   */
  public static Driver create(String name, String target, RosterDriver.MassMode rosterMass) {
    return switch (name) {
      case "roster" -> new RosterDriver(target, rosterMass);
      case "nacos" -> new NacosDriver(target, NacosDriver.PUBLIC);
      default -> throw new IllegalArgumentException(
          "--driver: \"" + name + "\" (expected: roster or nacos)");
    };
  }
}
