package dev.sluice.io.arrow.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.AtomicOutput;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.io.arrow.ArrowCompression;
import dev.sluice.io.arrow.ArrowWriteOptions;
import dev.sluice.io.arrow.IpcFormat;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.flatbuf.BodyCompressionMethod;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionCodec;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.ArrowWriter;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.ipc.message.ArrowBodyCompression;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;

/**
 * Writes Sluice batches with Arrow Java's IPC writer: each batch becomes a record batch through
 * {@link BatchExport} (its memory shared, not copied; a column without nulls gets no validity
 * bitmap) and is written from there, compressed by Arrow's codecs when asked. The writer's
 * allocator is closed at the end and must have nothing outstanding.
 */
public final class ArrowSink implements AutoCloseable {
  private final Schema schema;
  private final String resource;
  private final BufferAllocator allocator;
  private final VectorSchemaRoot root;
  private final ArrowWriter writer;
  private final CompressionCodec codec; // null: uncompressed
  private long rows;
  private boolean finished;

  private ArrowSink(Schema schema, String resource, WritableByteChannel channel, ArrowWriteOptions options) {
    this.schema = schema;
    this.resource = resource;
    this.allocator = new RootAllocator(Long.MAX_VALUE);
    VectorSchemaRoot r = null;
    try {
      r = VectorSchemaRoot.create(BatchExport.schema(schema), allocator);
      CompressionUtil.CodecType codec = switch (options.compression()) {
        case NONE -> CompressionUtil.CodecType.NO_COMPRESSION;
        case LZ4_FRAME -> CompressionUtil.CodecType.LZ4_FRAME;
        case ZSTD -> CompressionUtil.CodecType.ZSTD;
      };
      CompressionCodec.Factory factory = options.compression() == ArrowCompression.NONE
          ? CompressionCodec.Factory.INSTANCE : CommonsCompressionFactory.INSTANCE;
      DictionaryProvider none = new DictionaryProvider.MapDictionaryProvider();
      this.writer = options.format() == IpcFormat.FILE
          ? new AlignedFileWriter(r, none, channel, options.metadata(), factory, codec)
          : new AlignedStreamWriter(r, none, channel, factory, codec);
      this.root = r;
      this.codec = options.compression() == ArrowCompression.NONE ? null : factory.createCodec(codec);
      writer.start();
    } catch (IOException | RuntimeException e) {
      if (r != null) {
        r.close();
      }
      allocator.close();
      if (e instanceof IOException io) {
        throw new DatasetIOException(resource, "cannot write: " + AtomicOutput.reason(io), io);
      }
      throw (RuntimeException) e;
    }
  }

  /**
   * A writer of batches of {@code schema} to {@code channel} (closed with the sink).
   *
   * @param resource the output, for messages
   */
  public static ArrowSink open(Schema schema, String resource, WritableByteChannel channel, ArrowWriteOptions options) {
    return new ArrowSink(schema, resource, channel, options);
  }

  /** Rows written so far. */
  public long rows() {
    return rows;
  }

  /**
   * Writes {@code batch} as one record batch (its buffers written straight from the batch's memory,
   * or compressed from it) and closes it.
   *
   * @throws IllegalArgumentException when its fields are not the sink's
   */
  public void write(Batch batch) {
    try (batch) {
      if (!batch.schema().equals(schema)) {
        throw new IllegalArgumentException(resource + ": a batch of " + batch.schema() + " does not fit the schema "
            + schema + " being written");
      }
      try (ArrowRecordBatch rb = BatchExport.recordBatch(batch, allocator)) {
        if (codec == null) {
          write(rb);
        } else {
          try (ArrowRecordBatch compressed = compress(rb)) {
            write(compressed);
          }
        }
      }
      rows += batch.size();
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot write: " + AtomicOutput.reason(e), e);
    }
  }

  private void write(ArrowRecordBatch rb) throws IOException {
    if (writer instanceof AlignedFileWriter f) {
      f.write(rb);
    } else {
      ((AlignedStreamWriter) writer).write(rb);
    }
  }

  /** {@code rb} with every buffer compressed by the codec (or stored raw where that is smaller), as Arrow Java's unloader does. */
  private ArrowRecordBatch compress(ArrowRecordBatch rb) {
    List<ArrowBuf> out = new ArrayList<>(rb.getBuffers().size());
    try {
      for (ArrowBuf b : rb.getBuffers()) {
        b.getReferenceManager().retain(); // compress releases its input
        out.add(codec.compress(allocator, b));
      }
      return new ArrowRecordBatch(rb.getLength(), rb.getNodes(), out,
          new ArrowBodyCompression(codec.getCodecType().getType(), BodyCompressionMethod.BUFFER), true, false);
    } catch (RuntimeException e) {
      out.forEach(b -> b.getReferenceManager().release());
      throw e;
    }
  }

  /** Writes the end of the stream (and the footer of a file). */
  public void finish() {
    try {
      writer.end();
      finished = true;
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot write: " + AtomicOutput.reason(e), e);
    }
  }

  /** True once {@link #finish()} completed. */
  public boolean finished() {
    return finished;
  }

  /** Closes the writer, its channel and its allocator. */
  @Override
  public void close() {
    RuntimeException failure = null;
    try {
      writer.close();
    } catch (RuntimeException e) {
      failure = e;
    }
    try {
      root.close();
      allocator.close();
    } catch (RuntimeException e) {
      if (failure == null) {
        failure = e;
      } else {
        failure.addSuppressed(e);
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  // ------------------------------------------------------------------ 64-byte aligned bodies

  /** Record batch bodies start on a cache line: fixed-width rows of a multiple of 64 bytes then never straddle one more line than they need. */
  private static final int BODY_ALIGNMENT = 64;

  /**
   * Writes a record batch message as Arrow Java's {@code MessageSerializer} does, but pads the
   * metadata (its length prefix counts the padding, as the format allows) so that the body starts
   * at a multiple of 64 bytes rather than 8; the buffers inside it stay 8-byte aligned.
   */
  private static ArrowBlock writeAligned(WriteChannel out, ArrowRecordBatch batch, IpcOption option) throws IOException {
    long start = out.getCurrentPosition();
    ByteBuffer meta = MessageSerializer.serializeMetadata(batch, option);
    int metadataLength = meta.remaining();
    int prefix = 8;
    out.writeIntLittleEndian(MessageSerializer.IPC_CONTINUATION_TOKEN);
    int misaligned = (int) ((start + prefix + metadataLength) % BODY_ALIGNMENT);
    int padding = misaligned == 0 ? 0 : BODY_ALIGNMENT - misaligned;
    out.writeIntLittleEndian(metadataLength + padding);
    out.write(meta);
    out.writeZeros(padding);
    long bodyLength = MessageSerializer.writeBatchBuffers(out, batch);
    return new ArrowBlock(start, metadataLength + padding + prefix, bodyLength);
  }

  private static final class AlignedFileWriter extends ArrowFileWriter {
    AlignedFileWriter(VectorSchemaRoot root, DictionaryProvider dictionaries, WritableByteChannel out,
        java.util.Map<String, String> metadata, CompressionCodec.Factory factory, CompressionUtil.CodecType codec) {
      super(root, dictionaries, out, metadata, IpcOption.DEFAULT, factory, codec);
    }

    @Override
    protected ArrowBlock writeRecordBatch(ArrowRecordBatch batch) throws IOException {
      ArrowBlock block = writeAligned(out, batch, option);
      getRecordBlocks().add(block); // the footer lists this block
      return block;
    }

    void write(ArrowRecordBatch batch) throws IOException {
      writeRecordBatch(batch);
    }
  }

  private static final class AlignedStreamWriter extends ArrowStreamWriter {
    AlignedStreamWriter(VectorSchemaRoot root, DictionaryProvider dictionaries, WritableByteChannel out,
        CompressionCodec.Factory factory, CompressionUtil.CodecType codec) {
      super(root, dictionaries, out, IpcOption.DEFAULT, factory, codec);
    }

    @Override
    protected ArrowBlock writeRecordBatch(ArrowRecordBatch batch) throws IOException {
      return writeAligned(out, batch, option);
    }

    void write(ArrowRecordBatch batch) throws IOException {
      writeRecordBatch(batch);
    }
  }

  // ------------------------------------------------------------------ examples

  /** The fields of {@code data}: its declared schema, else those of {@code first}. */
  public static Schema schemaOf(Dataset<Example> data, Example first, String resource) {
    if (data instanceof HasSchema h) {
      return h.schema();
    }
    if (first == null) {
      throw new IllegalArgumentException("cannot write an empty dataset without a schema to " + resource);
    }
    List<TensorSpec> specs = new ArrayList<>();
    first.fields().forEach((name, t) -> {
      if (t == null) {
        throw new IllegalArgumentException("example " + first.index() + ": field '" + name
            + "' is null; give the dataset a schema (HasSchema) to write nullable fields");
      }
      specs.add(TensorSpec.of(name, t, false));
    });
    return Schema.of(specs);
  }

  /**
   * Writes every example of {@code data} in source order, {@code batchRows} per record batch: a
   * random-access source through bulk gathers, any other one example by example.
   */
  @SuppressWarnings("unchecked")
  public static void writeExamples(Dataset<Example> data, Schema schema, ArrowSink sink, int batchRows, BufferPool pool,
      java.util.function.LongConsumer progress) {
    if (data instanceof RandomAccessDataset<?> ra) {
      RandomAccessDataset<Example> source = (RandomAccessDataset<Example>) ra;
      long n = source.size();
      long[] indices = new long[(int) Math.min(batchRows, Math.max(n, 1))];
      for (long first = 0; first < n; first += batchRows) {
        int m = (int) Math.min(batchRows, n - first);
        for (int i = 0; i < m; i++) {
          indices[i] = first + i;
        }
        Batch b;
        try (BatchBuilder builder = BatchBuilder.create(schema, m, pool)) {
          source.gather(indices, 0, m, builder);
          b = builder.build();
        }
        sink.write(b);
        progress.accept(m);
      }
      return;
    }
    Iterator<Example> it = data.flux().toIterable(256).iterator();
    BatchBuilder builder = null;
    try {
      while (it.hasNext()) {
        if (builder == null) {
          builder = BatchBuilder.create(schema, batchRows, pool);
        }
        builder.append(it.next());
        if (builder.isFull()) {
          Batch b = builder.build();
          builder = null;
          sink.write(b);
          progress.accept(b.size());
        }
      }
      if (builder != null) {
        int m = builder.size();
        Batch b = builder.build();
        builder = null;
        sink.write(b);
        progress.accept(m);
      }
    } catch (UncheckedIOException e) {
      throw new DatasetIOException(sink.resource, "cannot write: " + AtomicOutput.reason(e.getCause()), e.getCause());
    } finally {
      if (builder != null) {
        builder.close();
      }
    }
  }
}
