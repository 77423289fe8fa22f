package dev.sluice.operators;

import dev.sluice.core.DatasetIOException;

/**
 * A cache that cannot be used as asked, refused when the pipeline is assembled or when a pass
 * opens it: a directory that belongs to another user or that other users can read, a budget that
 * does not fit the free space, a JVM without the flags the cache's index needs. The message names
 * the directory, what was found and what to do.
 */
public class CacheException extends DatasetIOException {
  private static final long serialVersionUID = 1L;

  /** A refusal concerning {@code resource} (a directory), caused by {@code cause} (may be null). */
  public CacheException(String resource, String message, Throwable cause) {
    super(resource, message, cause);
  }
}
