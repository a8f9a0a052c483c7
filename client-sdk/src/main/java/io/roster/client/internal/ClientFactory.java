package io.roster.client.internal;

import io.roster.client.RosterClient;

/**
 * How {@link RosterClient.Builder#build()} creates a client from one {@link ClientOptions}
 * value: public, with the options and {@link TlsSettings#load}, because the builder lives in
 * another package. Not part of the API; everything it creates is package-private here.
 */
public final class ClientFactory {

  private ClientFactory() {}

  /**
   * Builds a client with real threads and gRPC from settings validated as
   * {@link RosterClient.Builder} documents them, starts connecting and waits briefly (at most one
   * second, or the request timeout when shorter) for the first connection.
   *
   * @return the started client
   */
  public static RosterClient create(ClientOptions options) {
    return DefaultRosterClient.create(options);
  }
}
