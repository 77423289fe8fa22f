package dev.sluice.spark;

import dev.sluice.spark.internal.SluiceTable;
import java.util.Map;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The Spark data source {@code sluice}: a DataFrame written as a Sluice shard set by every task at
 * once, and a shard set read back as a DataFrame (one input partition per shard).
 *
 * <pre>{@code
 * df.write().format("sluice").mode("overwrite").option("shardRows", 65536).save("hdfs://nn/train");
 * Dataset<Row> back = spark.read().format("sluice").load("hdfs://nn/train");
 * }</pre>
 *
 * <p>The commit protocol, the options and the type mapping are described in {@code docs/spark.md}.
 */
public final class SluiceDataSource implements TableProvider, DataSourceRegister {
  /** The short name: {@code format("sluice")}. */
  public static final String NAME = "sluice";

  /** A data source; Spark creates it through {@code META-INF/services}. */
  public SluiceDataSource() {}

  @Override
  public String shortName() {
    return NAME;
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return SluiceTable.read(options).schema();
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return new SluiceTable(schema, new CaseInsensitiveStringMap(properties));
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }
}
