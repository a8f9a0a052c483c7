package io.roster.bench;

import io.roster.bench.driver.BenchClient;
import io.roster.bench.driver.Driver;
import io.roster.bench.driver.Drivers;
import io.roster.bench.driver.Endpoint;
import io.roster.bench.driver.RosterDriver;

/**
 * A provider in its own JVM for W6 (kill -9) and W7 (SIGSTOP): registers one instance with a
 * full client of the given driver, prints {@code REGISTERED} and waits to be killed.
 * Args: driver target service ip port.
 */
public final class ProviderMain {

  private ProviderMain() {}

  public static void main(String[] args) throws InterruptedException {
    Driver driver = Drivers.create(args[0], args[1], RosterDriver.MassMode.SDK);
    BenchClient client = driver.client("provider-" + ProcessHandle.current().pid());
    client.register(args[2], new Endpoint(args[3], Integer.parseInt(args[4])));
    System.out.println("REGISTERED");
    System.out.flush();
    Thread.currentThread().join();
  }
}
