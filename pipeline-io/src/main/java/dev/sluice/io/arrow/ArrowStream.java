package dev.sluice.io.arrow;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import reactor.core.publisher.Flux;

/**
 * An Arrow IPC stream read in order from an input stream (a pipe, standard input, a socket). The
 * schema is read when it is opened; the record batches as the flux is consumed.
 *
 * <p>The input can be read once: the first subscription to {@link #batches()} or {@link #flux}
 * consumes it, and a second one fails with {@link IllegalStateException}. Examples own nothing
 * (their tensors view heap memory); batches own pooled memory (stage {@value ArrowOptions#STAGE})
 * and the consumer closes each. {@link #close()} closes the input.
 */
public interface ArrowStream extends Dataset<Example>, HasSchema, AutoCloseable {

  /** The Arrow schema of the stream. */
  org.apache.arrow.vector.types.pojo.Schema arrowSchema();

  /**
   * The record batches in order, one batch each.
   *
   * <p><b>Reactive Streams semantics.</b> Reads one message per request on the subscribing
   * thread; completes at the end-of-stream marker or the end of the input; a damaged message is a
   * {@link dev.sluice.core.DatasetFormatException} naming the stream and the byte offset.
   */
  Flux<Batch> batches();

  /** Closes the input; idempotent. */
  @Override
  void close();
}
