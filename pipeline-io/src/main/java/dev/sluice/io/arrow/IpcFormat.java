package dev.sluice.io.arrow;

/** The two Arrow IPC formats. */
public enum IpcFormat {
  /**
   * The file format ({@code .arrow}, Feather version 2): {@code ARROW1}, the stream, and a footer
   * that locates every record batch, so a reader maps the file and reads any batch directly.
   */
  FILE,
  /**
   * The stream format ({@code .arrows}; Hugging Face {@code datasets} caches): a schema message and
   * then record batches, read in order; it may come from a pipe.
   */
  STREAM
}
