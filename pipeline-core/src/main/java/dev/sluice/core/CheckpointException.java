package dev.sluice.core;

/**
 * A pipeline state (a checkpoint) that cannot be used: a truncated, edited or unreadable file, a
 * state written by a newer Sluice, or a state taken on another dataset, another pipeline shape,
 * another seed or another rank. The message names the checkpoint, what differs and both values.
 * Nothing of such a state is ever applied.
 */
public class CheckpointException extends DatasetException {
  private static final long serialVersionUID = 1L;

  /**
   * @param checkpoint the checkpoint file, or a description of where the state came from
   * @param position where in it ("byte 120", "field position"), or null
   * @param message what was expected versus what was found
   * @param cause the underlying failure, or null
   */
  public CheckpointException(String checkpoint, String position, String message, Throwable cause) {
    super(checkpoint, position, message, cause);
  }

  /** A checkpoint failure without an underlying cause; see the four-argument constructor. */
  public CheckpointException(String checkpoint, String position, String message) {
    super(checkpoint, position, message);
  }
}
