package io.roster.server.rpc;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.roster.proto.v1.ErrorCode;
import io.roster.proto.v1.Result;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The one place that maps failures to gRPC statuses and to session error results. */
final class Errors {

  private static final Logger log = LoggerFactory.getLogger(Errors.class);

  private Errors() {}

  static Status status(RegistryException e) {
    Status s = switch (e.kind()) {
      case INVALID_ARGUMENT -> Status.INVALID_ARGUMENT;
      case NOT_FOUND -> Status.NOT_FOUND;
      case RESOURCE_EXHAUSTED -> Status.RESOURCE_EXHAUSTED;
      case FAILED_PRECONDITION -> Status.FAILED_PRECONDITION;
      case UNAVAILABLE -> Status.UNAVAILABLE;
      case UNAUTHENTICATED -> Status.UNAUTHENTICATED;
      case PERMISSION_DENIED -> Status.PERMISSION_DENIED;
    };
    return s.withDescription(e.getMessage());
  }

  static ErrorCode code(RegistryException e) {
    return switch (e.kind()) {
      case INVALID_ARGUMENT -> ErrorCode.ERROR_CODE_INVALID_ARGUMENT;
      case NOT_FOUND -> ErrorCode.ERROR_CODE_NOT_FOUND;
      case RESOURCE_EXHAUSTED -> ErrorCode.ERROR_CODE_RESOURCE_EXHAUSTED;
      case FAILED_PRECONDITION -> ErrorCode.ERROR_CODE_FAILED_PRECONDITION;
      case UNAVAILABLE -> ErrorCode.ERROR_CODE_UNAVAILABLE;
      case UNAUTHENTICATED -> ErrorCode.ERROR_CODE_UNAUTHENTICATED;
      case PERMISSION_DENIED -> ErrorCode.ERROR_CODE_PERMISSION_DENIED;
    };
  }

  /** NOT_FOUND for an operator call naming an instance that is not registered. */
  static StatusRuntimeException notRegistered(ServiceKey service, InstanceKey key) {
    return Status.NOT_FOUND.withDescription("instance " + key + " of " + service + " is not registered")
        .asRuntimeException();
  }

  /** A unary call's failure as a status exception; unexpected ones are logged once. */
  static StatusRuntimeException toStatusException(RuntimeException e) {
    if (e instanceof RegistryException re) {
      return status(re).asRuntimeException();
    }
    if (e instanceof StatusRuntimeException sre) {
      return sre;
    }
    log.warn("Unexpected failure in a call", e);
    return Status.INTERNAL.withDescription("internal error: " + e).asRuntimeException();
  }

  /**
   * What failed a future: the cause that a {@link CompletionException} (from a dependent
   * stage) wraps, as a runtime exception.
   */
  static RuntimeException cause(Throwable failed) {
    Throwable t = failed;
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t instanceof RuntimeException re ? re : new IllegalStateException(t);
  }

  /** A session request's failure as an error result. */
  static Result toResult(RuntimeException e) {
    if (e instanceof RegistryException re) {
      return Result.newBuilder().setCode(code(re)).setMessage(re.getMessage()).setField(re.field()).build();
    }
    log.warn("Unexpected failure handling a session request", e);
    return Result.newBuilder().setCode(ErrorCode.ERROR_CODE_INTERNAL).setMessage("internal error: " + e).build();
  }
}
