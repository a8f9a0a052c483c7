package io.roster.server.registry;

import io.roster.server.model.Names;
import io.roster.server.model.RegistryException;
import java.util.Objects;

/**
 * A namespace an operator created (decision 97): its id, the name a page shows and a description.
 * Namespaces also exist without one, as soon as a service is registered in them; a created one is
 * listed while it is empty, and is durable and replicated as the registry's settings are.
 *
 * @param id as the registry's service keys name namespaces ({@link Names#checkSimpleName})
 * @param name 1..{@value #MAX_NAME} characters, no control characters and none of {@value #REFUSED}
 * @param description 0..{@value #MAX_DESCRIPTION} characters, no control characters
 */
public record Namespace(String id, String name, String description) {

  /** The longest name. */
  public static final int MAX_NAME = 128;
  /** The longest description. */
  public static final int MAX_DESCRIPTION = 256;
  /** Characters a name may not hold (those Nacos refuses in a namespace's name). */
  public static final String REFUSED = "@#$%^&*";
  /** The most namespaces that may be created. */
  public static final int MAX_CREATED = 1000;

  public Namespace {
    Objects.requireNonNull(id);
    Objects.requireNonNull(name);
    Objects.requireNonNull(description);
  }

  /** A namespace whose fields are checked: throws INVALID_ARGUMENT naming the field, the value and the limit. */
  public static Namespace checked(String id, String name, String description) {
    checkId("namespaceId", id);
    checkText("namespaceName", name, 1, MAX_NAME, true);
    checkText("namespaceDesc", description, 0, MAX_DESCRIPTION, false);
    return new Namespace(id, name, description);
  }

  /** Checks a namespace id as every service key's namespace is checked, naming {@code field}. */
  public static void checkId(String field, String id) {
    Names.checkSimpleName(field, id, Names.MAX_NAMESPACE);
  }

  private static void checkText(String field, String value, int min, int max, boolean name) {
    String expected = min + ".." + max + " characters without control characters"
        + (name ? " or any of " + REFUSED : "");
    if (value.length() < min || value.length() > max) {
      throw RegistryException.invalid(field, value, expected);
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (Character.isISOControl(c) || (name && REFUSED.indexOf(c) >= 0)) {
        throw RegistryException.invalid(field, value, expected);
      }
    }
  }

  /** The default namespace, which always exists and cannot be changed or deleted. */
  public static final Namespace PUBLIC = new Namespace(Names.DEFAULT_NAMESPACE, Names.DEFAULT_NAMESPACE,
      "The default namespace");
}
