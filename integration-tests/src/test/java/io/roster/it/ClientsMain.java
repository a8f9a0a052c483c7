package io.roster.it;

import io.roster.client.Instance;
import io.roster.client.RosterClient;
import io.roster.client.RosterException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;

/**
 * Many SDK clients in one process, each registering one instance and waiting to be killed.
 * Args: servers service count ip basePort. {@code servers} lists every member; client k (0-based)
 * gets it rotated by {@code basePort + k}, so the clients of a process spread over the members,
 * registers {@code ip:(basePort + k)} and has the client id {@code c-(basePort + k)}. Prints
 * "REGISTERED" once every client has registered. Clients share one scheduler thread and one
 * listener thread, so 25 of them fit in a small JVM.
 */
public final class ClientsMain {

  private ClientsMain() {}

  public static void main(String[] args) throws Exception {
    List<String> servers = Arrays.asList(args[0].split(","));
    String service = args[1];
    int count = Integer.parseInt(args[2]);
    String ip = args[3];
    int basePort = Integer.parseInt(args[4]);
    ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1);
    scheduler.setRemoveOnCancelPolicy(true);
    var listeners = Executors.newSingleThreadExecutor();
    List<RosterClient> clients = new ArrayList<>();
    for (int k = 0; k < count; k++) {
      int port = basePort + k;
      List<String> rotated = new ArrayList<>(servers);
      java.util.Collections.rotate(rotated, -(port % servers.size()));
      clients.add(RosterClient.builder()
          .serverAddresses(String.join(",", rotated)).randomStart(false)
          .clientId("c-" + port)
          .clientName("clients-main")
          .scheduler(scheduler)
          .listenerExecutor(listeners)
          .requestTimeout(Timing.seconds(15)).connectTimeout(Timing.seconds(3))
          .build());
    }
    long deadline = System.nanoTime() + Timing.seconds(60).toNanos();
    java.util.stream.IntStream.range(0, count).parallel().forEach(k -> {
      // A register may fail while the cluster elects a leader (a chaos test starts clients then): retry.
      while (true) {
        try {
          clients.get(k).registerInstance(service, Instance.of(ip, basePort + k));
          return;
        } catch (RosterException e) {
          if (System.nanoTime() > deadline) {
            throw e;
          }
          System.out.println("register of port " + (basePort + k) + " failed, retrying: " + e);
        }
      }
    });
    System.out.println("REGISTERED");
    System.out.flush();
    Thread.currentThread().join();
  }
}
