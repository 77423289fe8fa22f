package dev.sluice.core;

/** An I/O failure (missing file, permission, read error) while reading or writing a dataset. */
public class DatasetIOException extends DatasetException {
  private static final long serialVersionUID = 1L;

  /** An I/O failure on {@code resource} (no position), caused by {@code cause} (may be null). */
  public DatasetIOException(String resource, String message, Throwable cause) {
    super(resource, null, message, cause);
  }
}
