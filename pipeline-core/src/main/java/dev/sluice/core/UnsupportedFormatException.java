package dev.sluice.core;

/**
 * A valid file that Sluice refuses to read (pickled object arrays, an unsupported codec, an
 * encrypted file without keys); the message says what is unsupported and what to do.
 */
public class UnsupportedFormatException extends DatasetFormatException {
  private static final long serialVersionUID = 1L;

  /** A refusal; see {@link DatasetException} for the arguments. */
  public UnsupportedFormatException(String resource, String position, String message) {
    super(resource, position, message);
  }

  /** A refusal caused by {@code cause}; see {@link DatasetException} for the arguments. */
  public UnsupportedFormatException(String resource, String position, String message, Throwable cause) {
    super(resource, position, message, cause);
  }
}
