package dev.sluice.core;

/** The bytes of a dataset do not match its format: bad magic, truncated, inconsistent header, … */
public class DatasetFormatException extends DatasetException {
  private static final long serialVersionUID = 1L;

  /** A format error caused by {@code cause}; see {@link DatasetException} for the arguments. */
  public DatasetFormatException(String resource, String position, String message, Throwable cause) {
    super(resource, position, message, cause);
  }

  /** A format error; see {@link DatasetException} for the arguments. */
  public DatasetFormatException(String resource, String position, String message) {
    super(resource, position, message);
  }
}
