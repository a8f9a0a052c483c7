package io.roster.it.springcloud;

import java.util.List;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Spring Cloud application on Spring Cloud Alibaba's Nacos discovery: it registers itself on
 * start, deregisters on shutdown, and answers what its {@link DiscoveryClient} sees. Settings
 * come as command-line properties ({@code --spring.application.name}, {@code --server.port},
 * {@code --spring.cloud.nacos.discovery.server-addr}).
 */
@SpringBootApplication
@RestController
public class DiscoveryApp {

  private final DiscoveryClient discovery;

  public DiscoveryApp(DiscoveryClient discovery) {
    this.discovery = discovery;
  }

  public static void main(String[] args) {
    SpringApplication.run(DiscoveryApp.class, args);
  }

  /** The instances of {@code service} as {@code host:port}, sorted. */
  @GetMapping("/instances/{service}")
  public List<String> instances(@PathVariable("service") String service) {
    return discovery.getInstances(service).stream().map(i -> i.getHost() + ":" + i.getPort()).sorted().toList();
  }

  /** The services the discovery client lists. */
  @GetMapping("/services")
  public List<String> services() {
    return discovery.getServices().stream().sorted().toList();
  }
}
