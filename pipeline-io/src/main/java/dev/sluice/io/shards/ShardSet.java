package dev.sluice.io.shards;

import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.spi.Fingerprinted;
import dev.sluice.io.Verifiable;
import java.nio.file.Path;
import java.util.List;
import reactor.core.publisher.Flux;

/**
 * An open Sluice shard set: a directory of shard files and the {@code metadata.json} that lists
 * them, read as one dataset whose global row indices run through the shards in order.
 *
 * <p>It is random access ({@link #get} returns zero-copy views of the mapping, {@link #gather}
 * copies rows straight into a batch's columns, across shard boundaries, for fixed- and
 * variable-length fields) and a {@link BatchSplitDataset} whose splits are its shards (with
 * {@link #readBatches}). Opening checks every shard's header and footer against
 * {@code metadata.json}. Every read checks the CRC32C of a field's blocks in a shard before it
 * delivers the first row of that field from that shard (once per open set; later reads cost a
 * volatile load): a mismatch is a {@link dev.sluice.core.DatasetFormatException} naming the shard,
 * the block and the expected and found checksums, and no changed row is ever delivered.
 * {@link #verify()} checks every byte against the stored checksums, padding included.
 *
 * <p>{@link #close()} closes the files: later reads throw
 * {@link dev.sluice.core.DatasetClosedException} ("already closed: &lt;file&gt;"). Views handed out
 * before stay valid; their mappings are released by the GC once the last view is gone.
 */
public interface ShardSet extends RandomAccessDataset<Example>, BatchSplitDataset<Example>, HasSchema, Verifiable,
    Fingerprinted, AutoCloseable {

  /** The directory this set was opened from (for a remote set, the path part of its URI). */
  Path path();

  /** The shards, in order, as {@code metadata.json} lists them. */
  List<ShardInfo> shards();

  /** The rows in index order; announces the shards in that order ({@link #readNext}) when subscribed. */
  @Override
  default Flux<Example> flux(PipelineContext context) {
    return Flux.defer(() -> {
      readNext(splits());
      return RandomAccessDataset.super.flux(context);
    });
  }

  /** Closes the shard files; idempotent. */
  @Override
  void close();
}
