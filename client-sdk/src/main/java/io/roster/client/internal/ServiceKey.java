package io.roster.client.internal;

import java.util.Objects;

/**
 * Names one service: namespace, group and name, all filled in.
 *
 * @param namespace the namespace
 * @param group the group
 * @param name the service name
 */
record ServiceKey(String namespace, String group, String name) {

  ServiceKey {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(group, "group");
    Objects.requireNonNull(name, "name");
  }

  @Override
  public String toString() {
    return namespace + "/" + group + "@@" + name;
  }
}
