package dev.sluice.io.arrow.internal;

import java.nio.ByteBuffer;

/**
 * The field nodes and buffers of one record batch (from an IPC message, or unloaded from Arrow
 * vectors). Every buffer is checked against the length the caller needs before it is handed out, so
 * nothing is read outside it.
 */
interface BatchBuffers {
  /** The file and record batch, for messages ({@code "x.arrow, record batch 3"}). */
  String resource();

  /** Where in the resource, for messages ({@code "record batch 3"}). */
  String position();

  /** Rows of the record batch. */
  long rows();

  /** Length (slots) of array {@code node}. */
  long length(int node);

  /** Null count of array {@code node}. */
  long nullCount(int node);

  /** Number of buffers of array {@code node} (for a view array, 2 plus its variadic data buffers). */
  int bufferCount(int node);

  /**
   * Buffer {@code which} of array {@code node} (0 the validity bitmap, then the type's buffers in
   * order): a little-endian view of at least {@code required} bytes, decompressed when the batch is
   * compressed.
   *
   * @param whole the bytes the whole array needs (at least {@code required}): the bound a compressed
   *     buffer's declared length is checked against when its frame does not state one
   * @param column the column being read, for messages
   * @param what the buffer, for messages
   * @throws dev.sluice.core.DatasetFormatException naming the resource, the record batch and the
   *     buffer when it holds fewer bytes, or is out of the message body, or does not decompress to
   *     the length it declares
   */
  ByteBuffer buffer(int node, int which, long required, long whole, String column, String what);
}
