package io.roster.client;

/**
 * Thrown by every call on a {@link RosterClient} after {@link RosterClient#close()}, and by calls
 * that were waiting when the client was closed. Its {@link #code()} is
 * {@link RosterException.Code#CLIENT_CLOSED}.
 */
public final class ClientClosedException extends RosterException {

  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message what was attempted on the closed client
   */
  public ClientClosedException(String message) {
    super(Code.CLIENT_CLOSED, message);
  }
}
