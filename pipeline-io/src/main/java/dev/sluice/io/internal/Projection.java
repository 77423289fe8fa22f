package dev.sluice.io.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.Column;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.Tensor;
import dev.sluice.core.spi.Fingerprinted;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;

/**
 * A dataset of some of another's fields, in the order named, for formats that cannot leave fields
 * unread: the source reads every field and the projection drops the others. It keeps the source's
 * random access or splits (with their block starts and block alignment), and closes the source when
 * closed.
 */
public final class Projection {
  private Projection() {}

  /**
   * The fields {@code names} of {@code source} (which must declare its schema).
   *
   * @throws IllegalArgumentException naming a field the source does not have, and those it has
   */
  @SuppressWarnings("unchecked")
  public static Dataset<Example> of(Dataset<Example> source, List<String> names) {
    if (!(source instanceof HasSchema h)) {
      throw new IllegalArgumentException("cannot select columns " + names + " of " + source + ": it declares no schema");
    }
    Schema schema = h.schema().select(names);
    if (source instanceof RandomAccessDataset<?> ra) {
      return new RandomAccess((RandomAccessDataset<Example>) ra, schema);
    }
    if (source instanceof BatchSplitDataset<?> bd) {
      return new BatchSplits((BatchSplitDataset<Example>) bd, schema);
    }
    if (source instanceof SplitDataset<?> sd) {
      return new Splits((SplitDataset<Example>) sd, schema);
    }
    return new Base(source, schema);
  }

  private static class Base implements Dataset<Example>, HasSchema, Fingerprinted, AutoCloseable {
    final Dataset<Example> source;
    final Schema schema;

    Base(Dataset<Example> source, Schema schema) {
      this.source = source;
      this.schema = schema;
    }

    @Override
    public Schema schema() {
      return schema;
    }

    @Override
    public Flux<Example> flux(PipelineContext context) {
      return source.flux(context).map(this::project);
    }

    Example project(Example e) {
      Map<String, Tensor> m = new LinkedHashMap<>();
      for (int i = 0; i < schema.size(); i++) {
        String name = schema.field(i).name();
        m.put(name, e.fields().get(name));
      }
      return Example.of(e.index(), m);
    }

    Batch project(Batch b) {
      List<Column> cols = new ArrayList<>(schema.size());
      try {
        for (int i = 0; i < schema.size(); i++) {
          cols.add(b.column(schema.field(i).name()));
        }
        return Batch.of(schema, cols, b.indices(), b::close);
      } catch (RuntimeException e) {
        b.close();
        throw e;
      }
    }

    /** The source's fingerprint and the selected fields, or null when the source has none. */
    @Override
    public String fingerprint() {
      String f = source instanceof Fingerprinted fp ? fp.fingerprint() : null;
      return f == null ? null : f + "select " + schema + "\n";
    }

    @Override
    public void close() throws Exception {
      if (source instanceof AutoCloseable c) {
        c.close();
      }
    }

    @Override
    public String toString() {
      return source + " columns " + schema;
    }
  }

  private static final class RandomAccess extends Base implements RandomAccessDataset<Example> {
    private final RandomAccessDataset<Example> ra;

    RandomAccess(RandomAccessDataset<Example> source, Schema schema) {
      super(source, schema);
      this.ra = source;
    }

    @Override
    public long size() {
      return ra.size();
    }

    @Override
    public Example get(long index) {
      return project(ra.get(index));
    }

    @Override
    public Flux<Example> flux(PipelineContext context) {
      return super.flux(context);
    }
  }

  private static class Splits extends Base implements SplitDataset<Example> {
    private final SplitDataset<Example> sd;

    Splits(SplitDataset<Example> source, Schema schema) {
      super(source, schema);
      this.sd = source;
    }

    @Override
    public List<Split> splits() {
      return sd.splits();
    }

    @Override
    public Flux<Example> read(Split split, long fromRow, long toRow) {
      return sd.read(split, fromRow, toRow).map(this::project);
    }

    /** The source's: dropping fields changes neither where a read starts cheaply nor what it decodes whole. */
    @Override
    public long[] blockStarts(Split split) {
      return sd.blockStarts(split);
    }

    /** The source's: the source still decodes its units whole. */
    @Override
    public long blockAlignment(Split split) {
      return sd.blockAlignment(split);
    }

    /** Passed on to the source, which reads the splits. */
    @Override
    public void readNext(List<Split> next) {
      sd.readNext(next);
    }

    @Override
    public Flux<Example> flux(PipelineContext context) {
      return super.flux(context);
    }
  }

  /** The projection of a split source that decodes into batches: its batches, projected. */
  private static final class BatchSplits extends Splits implements BatchSplitDataset<Example> {
    private final BatchSplitDataset<Example> bd;

    BatchSplits(BatchSplitDataset<Example> source, Schema schema) {
      super(source, schema);
      this.bd = source;
    }

    @Override
    public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int batchSize) {
      return bd.readBatches(split, fromRow, toRow, batchSize).map(this::project);
    }

    @Override
    public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int firstBatchSize, int batchSize) {
      return bd.readBatches(split, fromRow, toRow, firstBatchSize, batchSize).map(this::project);
    }

    @Override
    public int decodeParallelism() {
      return bd.decodeParallelism();
    }

    @Override
    public Flux<Example> flux(PipelineContext context) {
      return super.flux(context);
    }
  }
}
