package dev.sluice.io.arrow.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.io.arrow.ArrowOptions;
import dev.sluice.io.arrow.ArrowStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import reactor.core.publisher.Flux;

/** An Arrow IPC stream read in order from an input stream: see {@link ArrowStream}. */
public final class ArrowStreamDataset implements ArrowStream {
  /** The largest message metadata accepted: a schema or batch header is never near this. */
  private static final int MAX_METADATA = 64 << 20;
  /** Bodies are read in pieces of at most this many bytes, so a damaged length allocates only what arrives. */
  private static final int READ_CHUNK = 16 << 20;

  private final String name;
  private final Input input;
  private final org.apache.arrow.vector.types.pojo.Schema arrow;
  private final SchemaPlan plan;
  private final List<FieldPlan> fields;
  private final Schema schema;
  private final ArrowOptions options;
  private final AtomicBoolean consumed = new AtomicBoolean();

  private ArrowStreamDataset(String name, Input input, org.apache.arrow.vector.types.pojo.Schema arrow,
      boolean bigEndian, ArrowOptions options) {
    this.name = name;
    this.input = input;
    this.arrow = arrow;
    this.plan = SchemaPlan.of(arrow, bigEndian, options.fixedSizeListNulls());
    this.fields = plan.select(name, options.columns());
    this.schema = SchemaPlan.schemaOf(fields);
    this.options = options;
  }

  /** Reads the schema message from {@code in}; closes {@code in} when that fails. */
  public static ArrowStreamDataset open(InputStream in, String name, ArrowOptions options) {
    Input input = new Input(in, name);
    try {
      Msg first = input.next(Memory.heap());
      if (first == null || first.type != MessageHeader.Schema) {
        throw new DatasetFormatException(name, "byte 0", "an Arrow stream starts with a schema message but this one "
            + (first == null ? "is empty" : "starts with a " + IpcMessages.typeName(first.type)));
      }
      org.apache.arrow.flatbuf.Schema fb = IpcMessages.schemaHeader(first.message, name, "schema message");
      org.apache.arrow.vector.types.pojo.Schema arrow = IpcMessages.schema(fb, name);
      return new ArrowStreamDataset(name, input, arrow, IpcMessages.bigEndian(fb), options);
    } catch (RuntimeException e) {
      try {
        in.close();
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  @Override
  public org.apache.arrow.vector.types.pojo.Schema arrowSchema() {
    return arrow;
  }

  @Override
  public Schema schema() {
    return schema;
  }

  @Override
  public Flux<Batch> batches() {
    return read(true).map(d -> Batch.of(schema, d.columns, d.indices, d.memory));
  }

  /** The rows in order, as examples viewing heap memory. */
  @Override
  public Flux<Example> flux(PipelineContext context) {
    return read(false).concatMapIterable(d -> {
      List<Example> out = new ArrayList<>(d.indices.length);
      for (int r = 0; r < d.indices.length; r++) {
        Example.Builder e = Example.builder(d.indices[r]);
        for (Column c : d.columns) {
          if (c.isValid(r)) {
            e.put(c.name(), c.row(r));
          } else {
            e.putNull(c.name());
          }
        }
        out.add(e.build());
      }
      return out;
    }, 1);
  }

  /** One record batch's columns, over the memory that holds its body and conversions. */
  private record Decoded(List<Column> columns, long[] indices, Memory memory) { }

  private Flux<Decoded> read(boolean pooled) {
    return Flux.defer(() -> {
      if (!consumed.compareAndSet(false, true)) {
        return Flux.error(new IllegalStateException(name + ": an Arrow stream from an input can be read once"));
      }
      State state = new State();
      return Flux.<Decoded>generate(sink -> {
        Decoded d = next(state, pooled);
        if (d == null) {
          sink.complete();
        } else {
          sink.next(d);
        }
      }).doOnDiscard(Decoded.class, d -> d.memory.close());
    });
  }

  /** What reading the stream has seen: the dictionaries, the record batches and rows so far. */
  private static final class State {
    final Map<Long, Column> dictionaries = new HashMap<>();
    int batches;
    int dictionaryBatches;
    long rows;
  }

  /** The next record batch, after the dictionary batches before it; null at the end. */
  private Decoded next(State state, boolean pooled) {
    for (;;) {
      Memory memory = pooled ? Memory.pooled(options.memory().pool(ArrowOptions.STAGE)) : Memory.heap();
      try {
        Msg m = input.next(memory);
        if (m == null) {
          memory.close();
          return null;
        }
        switch (m.type) {
          case MessageHeader.DictionaryBatch -> {
            dictionary(state, m);
            memory.close();
          }
          case MessageHeader.RecordBatch -> {
            String where = "record batch " + state.batches++;
            RecordBatch rb = IpcMessages.recordBatch(m.message, name, where);
            memory = Memory.limited(memory, Memory.budget(m.body.remaining()));
            IpcBatchBuffers data = IpcBatchBuffers.open(name, where, plan, rb, m.body, memory);
            int rows = (int) data.rows();
            Map<Long, Column> dicts = Map.copyOf(state.dictionaries);
            List<Column> cols = new ArrayList<>(fields.size());
            for (FieldPlan p : fields) {
              cols.add(ColumnAssembler.assemble(p, data, 0, rows, memory, id -> {
                Column c = dicts.get(id);
                if (c == null) {
                  throw new DatasetFormatException(name, where, "dictionary " + id + " is not defined before this "
                      + "record batch");
                }
                return c;
              }));
            }
            long[] indices = new long[rows];
            for (int i = 0; i < rows; i++) {
              indices[i] = state.rows + i;
            }
            state.rows += rows;
            return new Decoded(cols, indices, memory);
          }
          case MessageHeader.Schema -> throw new DatasetFormatException(name, "byte " + m.offset, "a second schema message");
          default -> throw new UnsupportedFormatException(name, "byte " + m.offset, "a "
              + IpcMessages.typeName(m.type) + " message, which is not part of a record batch stream");
        }
      } catch (RuntimeException e) {
        memory.close();
        throw e;
      }
    }
  }

  private void dictionary(State state, Msg m) {
    String where = "dictionary batch " + state.dictionaryBatches++;
    DictionaryBatch d = IpcMessages.dictionaryBatch(m.message, name, where);
    long id = d.id();
    Leaf leaf = plan.dictionaries().get(id);
    if (leaf == null) {
      return; // a dictionary of a column not read (or not in the schema): nothing needs it
    }
    ByteBuffer body = m.body;
    if (body.isDirect()) { // pooled: dictionaries are kept on the heap
      ByteBuffer copy = ByteBuffer.allocate(body.remaining()).order(ByteOrder.LITTLE_ENDIAN);
      copy.put(0, body, 0, body.remaining());
      body = copy;
    }
    Column values = DictionaryValues.decode(name, where, d, body, leaf, plan.bigEndian());
    Column previous = state.dictionaries.get(id);
    if (d.isDelta()) {
      if (previous == null) {
        throw new DatasetFormatException(name, where, "a delta for dictionary " + id + " before the dictionary itself");
      }
      values = DictionaryValues.concat(previous, values);
    }
    state.dictionaries.put(id, values);
  }

  @Override
  public void close() {
    input.close();
  }

  @Override
  public String toString() {
    return "arrow stream(" + name + ", " + schema + ")";
  }

  /** One message: its header and its body. */
  private record Msg(Message message, byte type, ByteBuffer body, long offset) { }

  /** The messages of an input stream, read one at a time. */
  private static final class Input {
    private final InputStream in;
    private final String name;
    private long position;
    private boolean ended;

    Input(InputStream in, String name) {
      this.in = in;
      this.name = name;
    }

    /** The next message with its body in {@code memory}, or null at the end-of-stream marker or the end of the input. */
    Msg next(Memory memory) {
      if (ended) {
        return null;
      }
      long at = position;
      byte[] prefix = new byte[4];
      int got = read(prefix, 4);
      if (got == 0) {
        ended = true;
        return null;
      }
      if (got < 4) {
        throw truncated(at, "a message prefix");
      }
      if (at == 0 && Arrays.equals(prefix, Arrays.copyOf(IpcFile.MAGIC, 4))) {
        // an IPC file: its magic and padding, then the same messages as a stream (the footer after
        // the end-of-stream marker is not read)
        if (read(prefix, 4) < 4 || prefix[0] != IpcFile.MAGIC[4] || prefix[1] != IpcFile.MAGIC[5]) {
          throw new DatasetFormatException(name, "byte 0", "starts like the ARROW1 magic of an Arrow file but is not");
        }
        return next(memory);
      }
      int len = ByteBuffer.wrap(prefix).order(ByteOrder.LITTLE_ENDIAN).getInt();
      if (len == IpcMessages.CONTINUATION) {
        if (read(prefix, 4) < 4) {
          throw truncated(at, "a message prefix");
        }
        len = ByteBuffer.wrap(prefix).order(ByteOrder.LITTLE_ENDIAN).getInt();
      }
      if (len == 0) {
        ended = true;
        return null;
      }
      if (len < 0 || len > MAX_METADATA) {
        throw new DatasetFormatException(name, "byte " + at, "message metadata length " + len + " is out of range [1, "
            + MAX_METADATA + "]");
      }
      byte[] meta = new byte[len];
      if (read(meta, len) < len) {
        throw truncated(at, "message metadata of " + len + " bytes");
      }
      Message m = IpcMessages.message(ByteBuffer.wrap(meta), name, "byte " + at);
      long bodyLength;
      byte type;
      try {
        bodyLength = m.bodyLength();
        type = m.headerType();
      } catch (RuntimeException e) {
        throw new DatasetFormatException(name, "byte " + at, "malformed message metadata (" + e + ")", e);
      }
      if (bodyLength < 0 || bodyLength > Integer.MAX_VALUE - 8) {
        throw new DatasetFormatException(name, "byte " + at, "message body length " + bodyLength + " is out of range"
            + " (Sluice reads bodies of up to 2 GiB)");
      }
      return new Msg(m, type, body((int) bodyLength, at, memory), at);
    }

    /** {@code n} bytes of body, read in pieces so that only what arrives is held, then put in {@code memory}. */
    private ByteBuffer body(int n, long at, Memory memory) {
      byte[] buf = new byte[Math.min(n, READ_CHUNK)];
      int have = 0;
      while (have < n) {
        if (have == buf.length) {
          buf = Arrays.copyOf(buf, (int) Math.min(n, 2L * buf.length));
        }
        int got = read(buf, have, buf.length - have);
        if (got == 0) {
          throw truncated(at, "a message body of " + n + " bytes (" + have + " arrived)");
        }
        have += got;
      }
      if (memory == Memory.heap() && buf.length == n) {
        return ByteBuffer.wrap(buf).order(ByteOrder.LITTLE_ENDIAN);
      }
      ByteBuffer out = memory.allocate(n);
      out.put(0, buf, 0, n);
      return out.slice(0, n).order(ByteOrder.LITTLE_ENDIAN);
    }

    private int read(byte[] b, int n) {
      return read(b, 0, n);
    }

    /** Reads up to {@code n} bytes (fewer only at the end of the input). */
    private int read(byte[] b, int off, int n) {
      try {
        int got = in.readNBytes(b, off, n);
        position += got;
        return got;
      } catch (IOException e) {
        throw new DatasetIOException(name, "cannot read at byte " + position + ": " + e.getMessage(), e);
      }
    }

    private DatasetFormatException truncated(long at, String what) {
      return new DatasetFormatException(name, "byte " + at, "truncated: the input ends inside " + what);
    }

    void close() {
      try {
        in.close();
      } catch (IOException e) {
        throw new DatasetIOException(name, "cannot close: " + e.getMessage(), e);
      }
    }
  }
}
