package io.roster.bench.driver;

/** Creates a driver by name. */
public final class Drivers {

  private Drivers() {}

  /**
   * Creates the driver named {@code name}, for the server at {@code target}.
   *
   * @param name {@code roster} or {@code nacos}
   * @param target {@code host:port} of the server
   * @param rosterMass how the roster driver makes many-client workloads' clients
   */
  public static Driver create(String name, String target, RosterDriver.MassMode rosterMass) {
    return create(name, target, rosterMass, null);
  }

  /** The same; the roster driver's clients trust {@code tlsTrust} (a CA certificate, PEM) over TLS when given. */
  public static Driver create(String name, String target, RosterDriver.MassMode rosterMass,
      java.nio.file.@org.jspecify.annotations.Nullable Path tlsTrust) {
    return create(name, target, rosterMass, tlsTrust, "");
  }

  /** The same; the roster driver's clients present {@code token} (empty: none) to a server with auth on. */
  public static Driver create(String name, String target, RosterDriver.MassMode rosterMass,
      java.nio.file.@org.jspecify.annotations.Nullable Path tlsTrust, String token) {
    return switch (name) {
      case "roster" -> new RosterDriver(target, rosterMass, tlsTrust, token);
      case "nacos" -> new NacosDriver(target, NacosDriver.PUBLIC);
      default -> throw new IllegalArgumentException(
          "--driver: \"" + name + "\" (expected: roster or nacos)");
    };
  }
}
