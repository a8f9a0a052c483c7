package io.roster.it;

import io.roster.client.Instance;
import io.roster.client.RosterClient;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A provider as its own process: registers one instance and waits to be killed.
 * Args: serverAddresses service ip port [subscribeTo]. Prints "REGISTERED" once registered
 * (and, with subscribeTo, once the first state of that service has arrived). Its waits scale by
 * the test time factor, which {@link ProviderProcess} passes on.
 */
public final class ProviderMain {

  private ProviderMain() {}

  public static void main(String[] args) throws Exception {
    RosterClient client = RosterClient.builder()
        .serverAddresses(args[0])
        .clientName("provider-main")
        .requestTimeout(Timing.seconds(10))
        .build();
    client.registerInstance(args[1], Instance.of(args[2], Integer.parseInt(args[3])));
    if (args.length > 4) {
      CountDownLatch first = new CountDownLatch(1);
      client.subscribe(args[4], e -> first.countDown());
      if (!first.await(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("no state of " + args[4] + " within " + Timing.seconds(10));
      }
    }
    System.out.println("REGISTERED");
    System.out.flush();
    Thread.currentThread().join();
  }
}
