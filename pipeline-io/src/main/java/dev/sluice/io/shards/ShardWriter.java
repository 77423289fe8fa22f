package dev.sluice.io.shards;

import dev.sluice.core.Batch;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.internal.shardfile.FieldLayout;
import dev.sluice.core.internal.shardfile.ShardFile;
import dev.sluice.core.internal.shardfile.ShardFileWriter;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.io.shards.internal.ShardMetadata;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * Writes one shard file of a known number of rows: the building block of writers that produce a
 * shard set's files in several places at once (one task per shard) and list them in
 * {@code metadata.json} afterwards with {@link #metadataJson}.
 *
 * <p>The file is written under a temporary name beside {@code file} and renamed to it by
 * {@link #finish()}; {@link #close()} without {@code finish()} deletes what was written. The bytes
 * of the file depend only on the schema and the rows.
 *
 * <pre>{@code
 * try (ShardWriter w = ShardWriter.create(dir.resolve("part-0.shard"), schema, rows)) {
 *   for (Batch b : batches) { try (b) { w.write(b); } }
 *   ShardInfo info = w.finish();
 * }
 * }</pre>
 */
public final class ShardWriter implements AutoCloseable {
  /** The memory-manager stage the writers' staging buffers come from. */
  public static final String STAGE = "shard-writer";

  private final ShardFileWriter writer;

  private ShardWriter(ShardFileWriter writer) {
    this.writer = writer;
  }

  /**
   * A writer of a shard of exactly {@code rows} rows of {@code schema} to {@code file}.
   *
   * @param rows rows the shard will hold, &gt;= 0
   * @throws IllegalArgumentException for a negative row count
   * @throws UnsupportedOperationException for nested fields (lists of strings, lists of lists)
   * @throws dev.sluice.core.DatasetIOException naming {@code file} when it cannot be created
   */
  public static ShardWriter create(Path file, Schema schema, long rows) {
    Objects.requireNonNull(file, "file");
    Objects.requireNonNull(schema, "schema");
    if (rows < 0) {
      throw new IllegalArgumentException("rows >= 0 required but it was " + rows);
    }
    BufferPool pool = MemoryManager.shared().pool(STAGE);
    return new ShardWriter(ShardFileWriter.create(file, FieldLayout.of(schema.fields()), rows, pool));
  }

  /**
   * Appends the rows of {@code batch} (its columns matched to the schema's fields by name).
   *
   * @throws IllegalArgumentException when a column does not match its field or more rows arrive
   *     than the shard holds
   */
  public void write(Batch batch) {
    writer.write(batch);
  }

  /**
   * Completes the file (block table, footer, checksums), renames it into place and returns its
   * entry for {@code metadata.json}.
   *
   * @throws IllegalArgumentException when fewer rows were written than announced
   */
  public ShardInfo finish() {
    ShardFile.Summary s = writer.finish();
    return new ShardInfo(s.file(), s.rows(), s.bytes(), ShardFile.checksumText(s.checksum()));
  }

  /** Releases the staging buffers and, unless {@link #finish()} completed, deletes the file; idempotent. */
  @Override
  public void close() {
    writer.close();
  }

  /**
   * The {@code metadata.json} of a shard set of {@code schema} made of {@code shards} in row order,
   * as UTF-8 bytes (the same bytes for the same content on every platform).
   */
  public static byte[] metadataJson(Schema schema, List<ShardInfo> shards) {
    Objects.requireNonNull(schema, "schema");
    return new ShardMetadata(null, schema, shards).toJson();
  }
}
