package dev.sluice.io.npy.internal;

import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.Schema;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.AtomicOutput;
import dev.sluice.io.ExistingOutput;
import dev.sluice.io.internal.Outputs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;
import reactor.core.Exceptions;

/**
 * Writes a dataset of examples as one C-order little-endian {@code .npy} file (format 1.0) per
 * field. The row count need not be known in advance: room for the largest count is reserved in the
 * header, which is rewritten (padded with spaces, as the format allows) when the pass completes.
 * The files are written into a temporary directory ({@link AtomicOutput}) renamed into place when
 * all are complete.
 */
public final class NpyWriter {
  private static final int STAGING = 1 << 20;
  private static final int PROGRESS_ROWS = 4096;

  private final Path dir;
  private final Path temp;
  private Schema schema;
  private final List<FieldOut> outs = new ArrayList<>();
  private long rows;

  private NpyWriter(Path dir, Path temp, Schema schema) {
    this.dir = dir;
    this.temp = temp;
    this.schema = schema;
  }

  /** Writes every example of {@code dataset} (one pass, source order) to {@code dir}, replacing a dataset there. */
  public static void write(Dataset<Example> dataset, Path dir) {
    write(dataset, dir, ExistingOutput.REPLACE, rows -> { });
  }

  /**
   * {@link #write(Dataset, Path)} under the policy {@code existing} for a dataset already at
   * {@code dir}, telling {@code progress} the rows written every {@value #PROGRESS_ROWS} rows and at
   * the end. The files are written into a temporary directory beside {@code dir}, which is renamed
   * to {@code dir} when every file is complete and deleted when the write fails.
   */
  public static void write(Dataset<Example> dataset, Path dir, ExistingOutput existing, LongConsumer progress) {
    NpyWriter w;
    try (AtomicOutput out = Outputs.directory(dir, existing)) {
      w = new NpyWriter(dir, out.temp(), dataset instanceof HasSchema h ? h.schema() : null);
      try {
        w.writeAll(dataset, progress);
      } finally {
        w.closeAll();
      }
      Outputs.commit(out, existing, dir.toString());
    }
  }

  private void writeAll(Dataset<Example> dataset, LongConsumer progress) {
    if (schema != null) {
      start();
    }
    try {
      long[] pending = {0};
      dataset.flux().doOnNext(e -> {
        append(e);
        if (++pending[0] == PROGRESS_ROWS) {
          progress.accept(pending[0]);
          pending[0] = 0;
        }
      }).then().block();
      progress.accept(pending[0]);
    } catch (RuntimeException e) {
      Throwable t = Exceptions.unwrap(e);
      if (t instanceof UncheckedIOException u) {
        throw new DatasetIOException(dir.toString(), "write failed: " + Outputs.reason(u.getCause()), u.getCause());
      }
      throw t instanceof RuntimeException r ? r : e;
    }
    if (schema == null) {
      throw new IllegalArgumentException("cannot write an empty dataset without a schema to " + dir
          + ": nothing tells the fields (implement HasSchema)");
    }
    finish();
  }

  private void start() {
    for (TensorSpec s : schema.fields()) {
      if (!s.isFixedLength()) {
        throw new IllegalArgumentException("field '" + s.name() + "' " + s + " is variable-length; .npy holds fixed-length fields only");
      }
      if (s.dtype().numpyDescr() == null) {
        throw new IllegalArgumentException("field '" + s.name() + "' " + s + " has no NumPy dtype");
      }
      String n = s.name();
      if (n.contains("/") || n.contains("\\") || n.equals(".") || n.equals("..") || n.contains("\0")) {
        throw new IllegalArgumentException("field '" + n + "' cannot be a file name");
      }
    }
    for (TensorSpec s : schema.fields()) {
      outs.add(new FieldOut(temp.resolve(s.name() + ".npy"), dir.resolve(s.name() + ".npy"), s));
    }
  }

  private void append(Example e) {
    if (schema == null) {
      List<TensorSpec> specs = new ArrayList<>();
      for (String name : e.names()) {
        if (e.isNull(name)) {
          throw new IllegalArgumentException("field '" + name + "' of example " + e.index()
              + " is null; .npy has no nulls");
        }
        Tensor t = e.tensor(name);
        specs.add(new TensorSpec(name, t.dtype(), t.shape()));
      }
      schema = Schema.of(specs);
      start();
    }
    for (FieldOut o : outs) {
      String name = o.spec.name();
      if (e.isNull(name)) {
        throw new IllegalArgumentException("field '" + name + "' of example " + e.index() + " is null; .npy has no nulls");
      }
      Tensor t = e.tensor(name);
      if (t.dtype() != o.spec.dtype() || !t.shape().equals(o.spec.shape())) {
        throw new IllegalArgumentException("field '" + name + "' of example " + e.index() + " is " + t.dtype()
            + t.shape() + " but the field is " + o.spec.dtype() + o.spec.shape());
      }
      o.put(t.data());
    }
    rows++;
  }

  private void finish() {
    for (FieldOut o : outs) {
      o.finish(rows);
    }
  }

  private void closeAll() {
    for (FieldOut o : outs) {
      o.close();
    }
  }

  /** The header bytes of a C-order array; {@code padTo} &gt; 0 pads the header to that total length. */
  public static byte[] header(String descr, long[] shape, int padTo) {
    StringBuilder dict = new StringBuilder("{'descr': '").append(descr).append("', 'fortran_order': False, 'shape': (");
    for (int i = 0; i < shape.length; i++) {
      dict.append(shape[i]).append(shape.length == 1 ? "," : i + 1 < shape.length ? ", " : "");
    }
    dict.append("), }");
    int total = padTo > 0 ? padTo : ((10 + dict.length() + 1 + 63) / 64) * 64;
    int pad = total - 10 - dict.length() - 1;
    if (pad < 0 || total - 10 > 0xffff) {
      throw new IllegalStateException("npy header of " + dict + " does not fit in " + total + " bytes");
    }
    dict.append(" ".repeat(pad)).append('\n');
    byte[] text = dict.toString().getBytes(StandardCharsets.ISO_8859_1);
    ByteBuffer b = ByteBuffer.allocate(10 + text.length).order(ByteOrder.LITTLE_ENDIAN);
    b.put(NpyHeader.MAGIC).put((byte) 1).put((byte) 0).putShort((short) text.length).put(text);
    return b.array();
  }

  private static final class FieldOut {
    final Path file;
    final Path shown; // the file's name once in place, for messages
    final TensorSpec spec;
    final FileChannel ch;
    final ByteBuffer staging = ByteBuffer.allocateDirect(STAGING);
    final int headerBytes;

    FieldOut(Path file, Path shown, TensorSpec spec) {
      this.file = file;
      this.shown = shown;
      this.spec = spec;
      this.headerBytes = header(spec.dtype().numpyDescr(), shapeFor(Long.MAX_VALUE), 0).length;
      try {
        this.ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING);
        ch.position(headerBytes);
      } catch (IOException e) {
        throw new DatasetIOException(shown.toString(), "cannot create: " + Outputs.reason(e), e);
      }
    }

    long[] shapeFor(long rows) {
      return spec.shape().prepend(rows).dims();
    }

    void put(ByteBuffer data) {
      try {
        while (data.hasRemaining()) {
          if (!staging.hasRemaining()) {
            flush();
          }
          int n = Math.min(data.remaining(), staging.remaining());
          staging.put(staging.position(), data, data.position(), n);
          staging.position(staging.position() + n);
          data.position(data.position() + n);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    void flush() throws IOException {
      staging.flip();
      while (staging.hasRemaining()) {
        ch.write(staging);
      }
      staging.clear();
    }

    void finish(long rows) {
      try {
        flush();
        ByteBuffer h = ByteBuffer.wrap(header(spec.dtype().numpyDescr(), shapeFor(rows), headerBytes));
        long p = 0;
        while (h.hasRemaining()) {
          p += ch.write(h, p);
        }
        ch.force(false);
      } catch (IOException e) {
        throw new DatasetIOException(shown.toString(), "write failed: " + Outputs.reason(e), e);
      }
    }

    void close() {
      try {
        ch.close();
      } catch (IOException ignored) {
        // best effort on the failure path; the original error is reported
      }
    }
  }
}
