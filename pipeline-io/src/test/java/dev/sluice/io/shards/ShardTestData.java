package dev.sluice.io.shards;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.ColumnBuilder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;
import reactor.core.publisher.Flux;

/** Generated datasets for the shard tests: every field kind the format stores today, with nulls. */
final class ShardTestData {
  private ShardTestData() {}

  /**
   * Every dtype, fixed shapes, strings, bytes, lists of numbers and of fixed-shape items, nullable
   * fields, and nested values: lists of strings, lists of lists, lists with null elements.
   */
  static final Schema MIXED = Schema.of(
      new TensorSpec("b", DType.BOOL, Shape.scalar()),
      new TensorSpec("i8", DType.INT8, Shape.of(3)),
      new TensorSpec("u16", DType.UINT16, Shape.scalar()),
      new TensorSpec("i32", DType.INT32, Shape.of(2, 2)),
      new TensorSpec("u64", DType.UINT64, Shape.scalar()),
      new TensorSpec("f16", DType.FLOAT16, Shape.of(2)),
      new TensorSpec("bf16", DType.BFLOAT16, Shape.scalar()),
      new TensorSpec("f32", DType.FLOAT32, Shape.of(4), true),
      new TensorSpec("f64", DType.FLOAT64, Shape.scalar()),
      new TensorSpec("c64", DType.COMPLEX64, Shape.scalar()),
      new TensorSpec("c128", DType.COMPLEX128, Shape.of(1)),
      new TensorSpec("zero", DType.INT64, Shape.of(0)),
      new TensorSpec("text", DType.STRING, Shape.scalar(), true),
      new TensorSpec("blob", DType.BYTES, Shape.scalar()),
      new TensorSpec("tokens", DType.INT32, Shape.of(-1)),
      new TensorSpec("points", DType.FLOAT32, Shape.of(-1, 3), true),
      new TensorSpec("words", DType.STRING, Shape.of(-1), true),
      new TensorSpec("matrix", DType.INT16, Shape.of(-1, -1)),
      new TensorSpec("sparse", DType.FLOAT32, Shape.of(-1), false, 1),
      new TensorSpec("tags", DType.BYTES, Shape.of(-1, -1), true, 0b11),
      new TensorSpec("boxes", DType.FLOAT64, Shape.of(-1, -1, 2), false, 0b10));

  private static final String[] WORDS = {"", "a", "shard", "é", "日本語", "mapped rows", "Ω≈ç√", "x"};

  /**
   * {@code rows} seeded rows of {@link #MIXED}, each built in a one-row batch through the column
   * builders (so empty lists and all-null lists at any depth keep their rank) and copied out.
   */
  static ExampleList mixed(int rows, long seed) {
    List<Example> out = new ArrayList<>(rows);
    BufferPool pool = MemoryManager.shared().pool("test.mixed");
    for (int r = 0; r < rows; r++) {
      SplittableRandom rnd = new SplittableRandom(seed * 1_000_003L + r);
      try (BatchBuilder b = BatchBuilder.create(MIXED, 1, pool)) {
        for (int f = 0; f < MIXED.size(); f++) {
          TensorSpec spec = MIXED.field(f);
          boolean isNull = spec.nullable() && rnd.nextInt(5) == 0;
          if (spec.isFixedLength()) {
            byte[] bytes = randomBytes(spec.dtype(), Math.toIntExact(spec.rowBytes()), rnd);
            b.fixedColumn(f).put(0, bytes);
            if (isNull) {
              b.setNull(f, 0);
            }
          } else if (isNull) {
            b.column(f).addNull(0);
          } else {
            item(b.column(f), spec, 0, rnd);
          }
        }
        b.commitRange(r, 1);
        try (Batch batch = b.build()) {
          out.add(batch.copyRow(0));
        }
      }
    }
    return new ExampleList(MIXED, out);
  }

  /** A valid item at {@code depth}: a list of 0 to 5 elements (some null where the spec allows), or a value. */
  private static void item(ColumnBuilder c, TensorSpec spec, int depth, SplittableRandom rnd) {
    if (depth == spec.raggedRank()) {
      if (spec.dtype() == DType.STRING) {
        c.addBytes((WORDS[rnd.nextInt(WORDS.length)] + (rnd.nextBoolean() ? "" : "-" + rnd.nextInt(1000)))
            .getBytes(StandardCharsets.UTF_8));
      } else if (spec.dtype() == DType.BYTES) {
        c.addBytes(randomBytes(DType.BYTES, rnd.nextInt(40), rnd));
      } else {
        int at = c.reserveValues(1);
        c.valueBuffer().put(at, randomBytes(spec.dtype(), c.itemBytes(), rnd));
      }
      return;
    }
    c.startList(depth);
    int n = rnd.nextInt(6);
    for (int i = 0; i < n; i++) {
      if (spec.nullableAt(depth + 1) && rnd.nextInt(4) == 0) {
        c.addNull(depth + 1);
      } else {
        item(c, spec, depth + 1, rnd);
      }
    }
  }

  private static byte[] randomBytes(DType dtype, int n, SplittableRandom rnd) {
    byte[] bytes = new byte[n];
    if (dtype == DType.BOOL) {
      for (int i = 0; i < n; i++) {
        bytes[i] = (byte) rnd.nextInt(2);
      }
    } else {
      rnd.nextBytes(bytes);
    }
    return bytes;
  }

  /** {@code rows} rows of one bytes field {@code data} whose lengths are in {@code [min, max]}. */
  static ExampleList blobs(int rows, int min, int max, long seed) {
    Schema s = Schema.of(new TensorSpec("data", DType.BYTES, Shape.scalar()));
    List<Example> out = new ArrayList<>(rows);
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int r = 0; r < rows; r++) {
      byte[] b = new byte[min + rnd.nextInt(max - min + 1)];
      rnd.nextBytes(b);
      out.add(Example.of(r, "data", Tensor.ofBytes(b)));
    }
    return new ExampleList(s, out);
  }

  /** The bytes of every file of a directory, by name. */
  static Map<String, byte[]> files(Path dir) throws IOException {
    Map<String, byte[]> out = new TreeMap<>();
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        out.put(p.getFileName().toString(), Files.readAllBytes(p));
      }
    }
    return out;
  }

  /** A string tensor's text, for messages. */
  static String text(Tensor t) {
    ByteBuffer b = t.data();
    byte[] a = new byte[b.remaining()];
    b.get(a);
    return new String(a, StandardCharsets.UTF_8);
  }

  /** Little-endian int64 values. */
  static ByteBuffer longs(long... values) {
    ByteBuffer b = ByteBuffer.allocate(values.length * 8).order(ByteOrder.LITTLE_ENDIAN);
    for (long v : values) {
      b.putLong(v);
    }
    return b.flip();
  }

  /** A list of examples: random access, with a schema. */
  static class ExampleList implements RandomAccessDataset<Example>, HasSchema {
    final Schema schema;
    final List<Example> rows;

    ExampleList(Schema schema, List<Example> rows) {
      this.schema = schema;
      this.rows = List.copyOf(rows);
    }

    @Override
    public Schema schema() {
      return schema;
    }

    @Override
    public long size() {
      return rows.size();
    }

    @Override
    public Example get(long index) {
      RandomAccessDataset.checkIndex(index, rows.size(), this);
      return rows.get((int) index);
    }

    /** The same rows as a stream only (no random access, no splits). */
    Dataset<Example> streaming() {
      return new Streaming(schema, rows);
    }

    /** The same rows as splits of {@code splitRows} rows, read as examples. */
    SplitDataset<Example> splits(int splitRows) {
      return new Splits(schema, rows, splitRows);
    }
  }

  private record Streaming(Schema schema, List<Example> rows) implements Dataset<Example>, HasSchema {
    @Override
    public Flux<Example> flux(PipelineContext context) {
      return Flux.fromIterable(rows);
    }
  }

  private record Splits(Schema schema, List<Example> rows, int splitRows) implements SplitDataset<Example>, HasSchema {
    @Override
    public List<Split> splits() {
      List<Split> out = new ArrayList<>();
      for (int at = 0, k = 0; at < rows.size(); at += splitRows, k++) {
        out.add(new Split("part" + k, Math.min(splitRows, rows.size() - at)));
      }
      return out;
    }

    @Override
    public Flux<Example> read(Split split, long fromRow, long toRow) {
      int k = Integer.parseInt(split.id().substring(4));
      int base = k * splitRows;
      long end = Math.min(toRow, split.rowCount());
      return Flux.fromIterable(rows.subList((int) (base + fromRow), (int) (base + end)));
    }
  }
}
