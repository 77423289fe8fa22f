package dev.sluice.io.arrow;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import java.nio.file.Path;
import reactor.core.publisher.Flux;

/**
 * An Arrow IPC file or stream file on disk, memory-mapped and read as one dataset whose global row
 * indices run through its record batches in order.
 *
 * <p>Opening reads the schema and every record batch's metadata (for the file format from the
 * footer, for the stream format by stepping over the message bodies), so every batch's row count
 * is known: the dataset is random access ({@link #get} gives an example whose tensors view the
 * mapping or, where the layout needs a conversion, heap memory; {@link #gather} copies rows
 * straight into a batch's columns) and a {@link BatchSplitDataset} whose splits are its record
 * batches, with {@link #readBatches} decoding straight into batches (so the columnar path and the
 * window shuffle apply).
 *
 * <p>Batches from {@link #readBatches} and {@link #batches()} share fixed-width values, int64
 * offsets and string bytes with the mapping, and hold in pooled memory (stage
 * {@value ArrowOptions#STAGE}) only what had to be converted or decompressed; each owns that
 * memory and releases it when closed.
 *
 * <p>{@link #close()} closes the file: later reads throw
 * {@link dev.sluice.core.DatasetClosedException} ("already closed: &lt;file&gt;"). Views handed
 * out before stay valid; their mappings are released by the collector once the last view is gone.
 */
public interface ArrowDataset extends RandomAccessDataset<Example>, BatchSplitDataset<Example>, HasSchema,
    AutoCloseable {

  /** The local file this dataset was opened from; null when it was opened from a remote URI. */
  Path path();

  /** Whether the file is in the IPC file or stream format. */
  IpcFormat format();

  /** The Arrow schema of the file (every column, including those not selected). */
  org.apache.arrow.vector.types.pojo.Schema arrowSchema();

  /** Number of record batches. */
  int recordBatches();

  /**
   * Every record batch, in order, as one batch each (an empty record batch as an empty batch); the
   * consumer closes each.
   */
  Flux<Batch> batches();

  /**
   * This file as a split source only, without random access: a pipeline over it takes the
   * columnar path (record batches decoded in order and cut into the pipeline's batches; a shuffle
   * is a window shuffle of the decoded rows) instead of the index path. Prefer it for compressed
   * files, where a random access decompresses a whole record batch. Closing this dataset closes
   * the view's file too.
   */
  BatchSplitDataset<Example> asSplits();

  /** The rows in index order. */
  @Override
  default Flux<Example> flux(PipelineContext context) {
    return RandomAccessDataset.super.flux(context);
  }

  /** Closes the file; idempotent. */
  @Override
  void close();
}
