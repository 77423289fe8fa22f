package dev.sluice.core;

/**
 * A failure reading a dataset, naming the resource (a file, a URI) and the position (a byte
 * offset, a row, a row group) where it happened.
 */
public class DatasetException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String resource;
  private final String position;

  /**
   * @param resource the file or URI
   * @param position where in it ("byte 128", "row 17", "row group 3, column x"), or null
   * @param message what was expected versus what was found
   */
  public DatasetException(String resource, String position, String message, Throwable cause) {
    super(format(resource, position, message), cause);
    this.resource = resource;
    this.position = position;
  }

  /** A failure without an underlying cause; the arguments are those of the four-argument constructor. */
  public DatasetException(String resource, String position, String message) {
    this(resource, position, message, null);
  }

  private static String format(String resource, String position, String message) {
    StringBuilder sb = new StringBuilder();
    if (resource != null) {
      sb.append(resource);
    }
    if (position != null) {
      sb.append(sb.length() > 0 ? ", " : "").append(position);
    }
    if (sb.length() > 0) {
      sb.append(": ");
    }
    return sb.append(message).toString();
  }

  /** The file or URI, or null. */
  public String resource() {
    return resource;
  }

  /** The position in the resource, or null. */
  public String position() {
    return position;
  }
}
