package io.roster.it;

import io.roster.client.Instance;
import io.roster.client.RosterClient;
import java.time.Duration;

/**
 * A provider as its own process: registers one instance and waits to be killed.
 * Args: serverAddresses service ip port. Prints "REGISTERED" once registered.
 */
public final class ProviderMain {

  private ProviderMain() {}

  public static void main(String[] args) throws Exception {
    RosterClient client = RosterClient.builder()
        .serverAddresses(args[0])
        .clientName("provider-main")
        .requestTimeout(Duration.ofSeconds(10))
        .build();
    client.registerInstance(args[1], Instance.of(args[2], Integer.parseInt(args[3])));
    System.out.println("REGISTERED");
    System.out.flush();
    Thread.currentThread().join();
  }
}
