package dev.sluice.io.arrow;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.internal.AtomicOutput;
import dev.sluice.core.internal.OptionalLibrary;
import dev.sluice.io.ExistingOutput;
import dev.sluice.io.arrow.internal.ArrowFileDataset;
import dev.sluice.io.arrow.internal.ArrowSink;
import dev.sluice.io.arrow.internal.ArrowStreamDataset;
import dev.sluice.io.internal.Outputs;
import dev.sluice.io.RemoteCache;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.internal.cache.CachedFile;
import dev.sluice.io.internal.cache.CopyCheck;
import dev.sluice.io.internal.cache.FileCache;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.Objects;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * Arrow IPC files and streams ({@code .arrow}, {@code .arrows}, {@code .feather} version 2, Hugging
 * Face {@code datasets} caches): read zero-copy from a memory mapping, or in order from a pipe.
 * The type mapping, the conversions and the errors are described in {@code docs/formats/arrow.md}.
 *
 * <pre>{@code
 * try (ArrowDataset data = Arrow.open(Path.of("train.arrow"))) {
 *   Example e = data.get(17);                        // views of the mapping
 *   Pipeline.from(data).shuffle().batch(256)...      // batch() gathers rows in bulk
 * }
 * Arrow.write(dataset, Path.of("out.arrow"), ArrowWriteOptions.builder().compression(ArrowCompression.ZSTD).build());
 * }</pre>
 */
public final class Arrow {
  private Arrow() {}

  /** Opens {@code file} (the IPC file or stream format, recognized from its first bytes) with every column. */
  public static ArrowDataset open(Path file) {
    return open(file, ArrowOptions.defaults());
  }

  /**
   * Opens {@code file} (the IPC file or stream format, recognized from its first bytes): maps it,
   * reads its schema and the metadata of every record batch (never a body).
   *
   * @throws dev.sluice.core.DatasetFormatException naming the file and the position when it is not
   *     Arrow IPC, is truncated or damaged
   * @throws dev.sluice.core.UnsupportedFormatException for a selected column Sluice cannot read
   *     (every column when none is selected), naming it and its type
   * @throws IllegalArgumentException naming a selected column the file does not have
   * @throws dev.sluice.core.MissingDependencyException when Arrow Java (arrow-vector,
   *     arrow-memory-netty, netty-buffer, arrow-compression) is not on the class path
   */
  public static ArrowDataset open(Path file, ArrowOptions options) {
    Objects.requireNonNull(file, "file");
    Objects.requireNonNull(options, "options");
    OptionalLibrary.ARROW.require(file.toString());
    if (Files.isDirectory(file)) {
      throw new DatasetIOException(file.toString(), "is a directory, not an Arrow IPC file", null);
    }
    return ArrowFileDataset.open(file, options);
  }

  /**
   * Opens an Arrow IPC file named by a URI with every column ({@link #open(URI, ArrowOptions)}).
   */
  public static ArrowDataset open(URI uri) {
    return open(uri, ArrowOptions.defaults());
  }

  /**
   * Opens an Arrow IPC file named by a URI. A {@code file:} URI (or one without a scheme) is the
   * local path, opened as {@link #open(Path, ArrowOptions)} does; any other scheme
   * ({@code hdfs://}, {@code s3a://}, ...) is read through Hadoop's {@code FileSystem} with
   * positioned reads, whatever {@link ArrowOptions#io()} says (a remote file cannot be mapped).
   *
   * @throws dev.sluice.core.MissingDependencyException for a remote URI when
   *     {@code org.apache.hadoop:hadoop-client-api} or {@code hadoop-client-runtime} is not on the
   *     class path, or when Arrow Java is not
   */
  public static ArrowDataset open(URI uri, ArrowOptions options) {
    Objects.requireNonNull(uri, "uri");
    Objects.requireNonNull(options, "options");
    if (!RemoteFiles.isRemote(uri)) {
      return open(RemoteFiles.localPath(uri), options);
    }
    OptionalLibrary.ARROW.require(uri.toString());
    return ArrowFileDataset.open(RemoteFiles.open(uri), options);
  }

  /**
   * {@link #open(URI, ArrowOptions)} with a remote file read through the node-local {@code cache}:
   * its schema and footer are read remotely on open; the first read of its record batches downloads
   * it whole into the cache (an IPC file checked for {@code ARROW1} at both ends and a footer length
   * that fits before it is published), and every read is then served from a mapping of the local copy. A
   * local URI ignores the cache.
   *
   * @throws dev.sluice.core.DatasetIOException naming the URI when it cannot be read or cached
   */
  public static ArrowDataset open(URI uri, ArrowOptions options, RemoteCache cache) {
    Objects.requireNonNull(uri, "uri");
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(cache, "cache");
    if (!RemoteFiles.isRemote(uri)) {
      return open(RemoteFiles.localPath(uri), options);
    }
    OptionalLibrary.ARROW.require(uri.toString());
    CachedFile file = FileCache.of(cache).open(uri, CopyCheck.whenStartsWith("ARROW1",
        CopyCheck.magicAndFooter("Arrow IPC", "ARROW1", 8)));
    ArrowDataset ds = ArrowFileDataset.open(file, options);
    file.opened();
    return ds;
  }

  /**
   * Reads an Arrow IPC stream from {@code in} (standard input, a pipe): reads its schema message
   * now and the record batches as they are consumed. The caller closes the stream (which closes
   * {@code in}).
   *
   * @param name names the input in messages ({@code "stdin"})
   * @throws dev.sluice.core.DatasetFormatException when the input does not start with a schema
   *     message
   */
  public static ArrowStream openStream(InputStream in, String name) {
    return openStream(in, name, ArrowOptions.defaults());
  }

  /**
   * {@link #openStream(InputStream, String)} reading only {@link ArrowOptions#columns()}.
   *
   * @throws dev.sluice.core.MissingDependencyException when Arrow Java (arrow-vector,
   *     arrow-memory-netty, netty-buffer, arrow-compression) is not on the class path
   */
  public static ArrowStream openStream(InputStream in, String name, ArrowOptions options) {
    Objects.requireNonNull(in, "in");
    Objects.requireNonNull(name, "name");
    OptionalLibrary.ARROW.require(name);
    return ArrowStreamDataset.open(in, name, options);
  }

  /**
   * Writes every example of {@code data} (one pass, source order) to the file {@code out}: under a
   * temporary name beside it ({@code .<name>.tmp-<pid>-<random>}), renamed to {@code out} when
   * complete (a failure deletes it), replacing a file already there or refusing it as
   * {@link ArrowWriteOptions#existing()} says.
   * A random-access source is read with bulk gathers. The fields are the source's schema
   * ({@link dev.sluice.core.HasSchema}), else those of its first example.
   *
   * @return the rows written
   * @throws UnsupportedOperationException for a field Arrow has no type for (complex64, complex128)
   * @throws DatasetIOException when the file cannot be written
   * @throws dev.sluice.core.MissingDependencyException when Arrow Java (arrow-vector,
   *     arrow-memory-netty, netty-buffer, arrow-compression) is not on the class path
   */
  public static long write(Dataset<Example> data, Path out, ArrowWriteOptions options) {
    Objects.requireNonNull(data, "data");
    OptionalLibrary.ARROW.require(String.valueOf(out));
    return toFile(out, options.existing(), (channel, resource) -> {
      Example first = null;
      Schema schema;
      if (data instanceof dev.sluice.core.HasSchema h) {
        schema = h.schema();
      } else {
        Iterator<Example> it = data.flux().take(1).toIterable().iterator();
        first = it.hasNext() ? it.next() : null;
        schema = ArrowSink.schemaOf(data, first, resource);
      }
      try (ArrowSink sink = ArrowSink.open(schema, resource, channel, options)) {
        ArrowSink.writeExamples(data, schema, sink, options.batchRows(),
            MemoryManager.shared().pool(ArrowOptions.STAGE + "-write"), options.progress());
        sink.finish();
        return sink.rows();
      }
    });
  }

  /**
   * Writes {@code batches} (every one of {@code schema}'s fields, in order; each batch one record
   * batch) to the file {@code out}, replaced or refused if it exists, as {@link #write(Dataset, Path,
   * ArrowWriteOptions)} does. Every batch is closed, also those not written after a failure.
   *
   * @return the rows written
   * @throws dev.sluice.core.MissingDependencyException when Arrow Java (arrow-vector,
   *     arrow-memory-netty, netty-buffer, arrow-compression) is not on the class path
   */
  public static long write(Schema schema, Publisher<Batch> batches, Path out, ArrowWriteOptions options) {
    Objects.requireNonNull(schema, "schema");
    Objects.requireNonNull(batches, "batches");
    OptionalLibrary.ARROW.require(String.valueOf(out));
    return toFile(out, options.existing(), (channel, resource) -> writeBatches(schema, batches, channel, resource, options));
  }

  /**
   * Writes {@code batches} to {@code out} (standard output, a socket; usually in the
   * {@link IpcFormat#STREAM} format); {@code out} is flushed, not closed.
   *
   * @return the rows written
   * @throws dev.sluice.core.MissingDependencyException when Arrow Java (arrow-vector,
   *     arrow-memory-netty, netty-buffer, arrow-compression) is not on the class path
   */
  public static long write(Schema schema, Publisher<Batch> batches, OutputStream out, ArrowWriteOptions options) {
    Objects.requireNonNull(out, "out");
    OptionalLibrary.ARROW.require();
    WritableByteChannel ch = Channels.newChannel(new java.io.FilterOutputStream(out) {
      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        out.write(b, off, len);
      }

      @Override
      public void close() throws IOException {
        out.flush(); // the caller's stream stays open
      }
    });
    return writeBatches(schema, batches, ch, "output stream", options);
  }

  private static long writeBatches(Schema schema, Publisher<Batch> batches, WritableByteChannel channel,
      String resource, ArrowWriteOptions options) {
    try (ArrowSink sink = ArrowSink.open(schema, resource, channel, options)) {
      for (Batch b : Flux.from(batches).doOnDiscard(Batch.class, Batch::close).toIterable(2)) {
        int n = b.size();
        sink.write(b);
        options.progress().accept(n);
      }
      sink.finish();
      return sink.rows();
    }
  }

  /** Writes to a temporary file beside {@code out}, then renames it into place ({@link Outputs}). */
  private static long toFile(Path out, ExistingOutput existing, Writer body) {
    Objects.requireNonNull(out, "out");
    String resource = out.toString();
    try (AtomicOutput file = Outputs.file(out, existing)) {
      long rows;
      try (FileChannel ch = FileChannel.open(file.temp(), StandardOpenOption.WRITE)) {
        rows = body.write(ch, resource);
      }
      Outputs.commit(file, existing, resource);
      return rows;
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot write: " + Outputs.reason(e), e);
    }
  }

  @FunctionalInterface
  private interface Writer {
    long write(WritableByteChannel channel, String resource) throws IOException;
  }
}
