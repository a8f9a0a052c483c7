package io.roster.server.registry;

/** A namespace and how many services and instances it has ({@link Registry#namespaces}). */
public record NamespaceCount(String namespace, int services, int instances) {}
