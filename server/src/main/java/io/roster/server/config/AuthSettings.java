package io.roster.server.config;

import java.nio.file.Path;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** Auth: the auth file (null: auth off) and how long a login's token lasts. Immutable. */
public record AuthSettings(@Nullable Path authFile, Duration tokenTtl) {}
