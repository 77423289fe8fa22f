package dev.sluice.core;

/** The bytes of a dataset do not match its format: bad magic, truncated, inconsistent header, … */
public class DatasetFormatException extends DatasetException {
  private static final long serialVersionUID = 1L;

  public DatasetFormatException(String resource, String position, String message, Throwable cause) {
    super(resource, position, message, cause);
  }

  public DatasetFormatException(String resource, String position, String message) {
    super(resource, position, message);
  }
}
