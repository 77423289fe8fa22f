package dev.sluice.core.testing;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.Column;
import dev.sluice.core.HasSchema;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import reactor.core.publisher.Flux;

/** What tests compare batches by, and a split source seen without its columnar capability. */
public final class BatchContents {
  private BatchContents() {}

  /** Row {@code r} of {@code b}: its index and every column's value as bytes (or {@code null}). */
  public static String render(Batch b, int r) {
    StringBuilder s = new StringBuilder().append(b.index(r));
    for (int c = 0; c < b.schema().size(); c++) {
      Column col = b.column(c);
      s.append(' ').append(col.isValid(r) ? Arrays.toString(col.row(r).toByteArray()) : "null");
    }
    return s.toString();
  }

  /** Every batch of a pass as its rendered rows; each batch is closed. */
  public static List<List<String>> of(Flux<Batch> batches) {
    List<List<String>> out = new ArrayList<>();
    batches.doOnNext(b -> {
      try (b) {
        List<String> rows = new ArrayList<>();
        for (int r = 0; r < b.size(); r++) {
          rows.add(render(b, r));
        }
        out.add(rows);
      }
    }).blockLast();
    return out;
  }

  /** The same splits and rows as {@code source}, as a plain split source: pipelines over it take the element path. */
  public static <T> SplitDataset<T> rowsOnly(BatchSplitDataset<T> source) {
    return new RowsOnly<>(source);
  }

  private record RowsOnly<T>(BatchSplitDataset<T> source) implements SplitDataset<T>, HasSchema {
    @Override
    public Schema schema() {
      return source.schema();
    }

    @Override
    public List<Split> splits() {
      return source.splits();
    }

    @Override
    public Flux<T> read(Split split, long fromRow, long toRow) {
      return source.read(split, fromRow, toRow);
    }

    @Override
    public Flux<T> flux(PipelineContext context) {
      return source.flux(context);
    }

    @Override
    public String toString() {
      return "rows-only(" + source + ")";
    }
  }
}
