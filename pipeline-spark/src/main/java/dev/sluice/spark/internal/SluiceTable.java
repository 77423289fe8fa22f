package dev.sluice.spark.internal;

import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import java.net.URI;
import java.util.EnumSet;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** A shard set as a Spark table: read by shard, written by every task at once. */
public final class SluiceTable implements SupportsRead, SupportsWrite {
  private final StructType schema;
  private final CaseInsensitiveStringMap options;

  public SluiceTable(StructType schema, CaseInsensitiveStringMap options) {
    this.schema = schema;
    this.options = options;
  }

  /** The URI of the shard set: the {@code path} option ({@code save(path)}, {@code load(path)}). */
  public static URI uri(CaseInsensitiveStringMap options) {
    String path = options.get("path");
    if (path == null || path.isBlank()) {
      throw new IllegalArgumentException("sluice: no path: use load(uri) or save(uri)");
    }
    URI u = URI.create(path);
    return u.getScheme() == null ? java.nio.file.Path.of(path).toAbsolutePath().toUri() : u;
  }

  /** The shard set's description as the table a read sees. */
  public static SluiceTable read(CaseInsensitiveStringMap options) {
    URI uri = uri(options);
    try (ShardSet set = Shards.open(uri)) {
      return new SluiceTable(SchemaMapping.toSpark(set.schema(), uri + "/metadata.json"), options);
    }
  }

  @Override
  public String name() {
    return "sluice:" + options.get("path");
  }

  @Override
  public StructType schema() {
    return schema;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.BATCH_READ, TableCapability.BATCH_WRITE, TableCapability.TRUNCATE);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap readOptions) {
    return new ShardScan(uri(options), schema, readOptions.getBoolean(ShardScan.COLUMNAR, true));
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return new ShardBatchWrite.Builder(uri(options), info);
  }
}
