package dev.sluice.core;

/** A read from a source after it was closed: "already closed: &lt;file&gt;". */
public class DatasetClosedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** An exception whose message is {@code "already closed: <resource>"}. */
  public DatasetClosedException(String resource) {
    super("already closed: " + resource);
  }
}
