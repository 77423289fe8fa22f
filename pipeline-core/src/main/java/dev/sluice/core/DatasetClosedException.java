package dev.sluice.core;

/** A read from a source after it was closed: "already closed: &lt;file&gt;". */
public class DatasetClosedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  public DatasetClosedException(String resource) {
    super("already closed: " + resource);
  }
}
