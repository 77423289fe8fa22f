package dev.sluice.examples.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.DType;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.Tensor;
import dev.sluice.operators.EqualLength;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code sluice head PATH [-n N] [--columns a,b] [--json] [--shuffle --seed S]}: the first N rows
 * as an aligned table (one column per field, lists cut after {@link #TABLE_ITEMS} items and strings
 * after {@link #TABLE_CHARS} characters, with {@code …}) or, with {@code --json}, as one JSON
 * object per row holding the exact values. With {@code --shuffle} the rows are the first of the
 * shuffled pass {@code sluice read --shuffle --seed S} delivers. Only the rows shown are read.
 */
@Command(name = "head", mixinStandardHelpOptions = true,
    description = "Print the first rows of a dataset as a table, or as JSON lines.")
final class HeadCommand implements Callable<Integer> {
  /** Items of a list shown in the table before {@code …}. */
  static final int TABLE_ITEMS = 8;
  /** Characters of a string (bytes of a blob) shown in the table before {@code …}. */
  static final int TABLE_CHARS = 40;

  private static final ObjectMapper JSON = new ObjectMapper();

  @Mixin
  DatasetInputOptions input = new DatasetInputOptions();

  @Option(names = "-n", paramLabel = "N", defaultValue = "10", description = "Rows to print (default: ${DEFAULT-VALUE}).")
  long rows;

  @Option(names = "--json", description = "One JSON object per row with the exact values (nulls as null, NaN and "
      + "infinities as strings, bytes as base64) instead of the table.")
  boolean json;

  @Option(names = "--shuffle", description = "The first rows of the shuffled pass, in the order 'sluice read --shuffle' delivers.")
  boolean shuffle;

  @Option(names = "--seed", paramLabel = "S", defaultValue = "0", description = "With --shuffle: the seed (default: ${DEFAULT-VALUE}).")
  long seed;

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    OptionChecks.nonNegative("-n", rows);
    if (spec.commandLine().getParseResult().hasMatchedOption("--seed") && !shuffle) {
      throw new IllegalArgumentException("--seed " + seed + " needs --shuffle");
    }
    Dataset<Example> data = input.open(null);
    try {
      Pipeline<Example> p = Pipeline.from(data);
      if (shuffle && (data instanceof RandomAccessDataset || data instanceof SplitDataset)) {
        p = p.shuffle();
      }
      p = p.shard(1, 0, EqualLength.PAD);
      if (shuffle && !(data instanceof RandomAccessDataset) && !(data instanceof SplitDataset)) {
        p = p.shuffle(ReadCommand.STREAMING_SHUFFLE_BUFFER);
      }
      PipelineContext ctx = PipelineContext.defaults().withSeed(seed);
      int limit = json ? Integer.MAX_VALUE : TABLE_ITEMS;
      List<Long> indices = new ArrayList<>();
      List<Map<String, Object>> values = new ArrayList<>();
      Set<String> names = new LinkedHashSet<>(input.columns);
      // values are taken out of each row while it is delivered: a row may view a batch's memory
      p.take(rows).flux(ctx).doOnNext(e -> {
        Map<String, Object> row = new LinkedHashMap<>();
        for (Map.Entry<String, Tensor> f : e.fields().entrySet()) {
          names.add(f.getKey());
          row.put(f.getKey(), f.getValue() == null ? null : value(f.getValue(), limit));
        }
        indices.add(e.index());
        values.add(row);
      }).blockLast();
      PrintWriter out = spec.commandLine().getOut();
      if (json) {
        for (Map<String, Object> row : values) {
          out.println(jsonLine(row));
        }
      } else {
        out.print(table(new ArrayList<>(names), indices, values));
      }
      out.flush();
      return 0;
    } finally {
      DatasetRun.close(data);
    }
  }

  /** Items left out of a list shown in the table. */
  private record Cut() {}

  /** A complex number. */
  private record Complex(double re, double im) {}

  /**
   * The value of {@code t} as Java objects: a list per dimension (null items as null), at most
   * {@code limit} items per list followed by a {@link Cut} when there are more; scalars as
   * Boolean, Long, BigInteger (uint64), Float, Double, {@link Complex}, String or byte[].
   */
  static Object value(Tensor t, int limit) {
    if (t.shape().rank() == 0) {
      return scalar(t);
    }
    long n = t.shape().dim(0);
    List<Object> items = new ArrayList<>();
    for (long i = 0; i < n; i++) {
      if (i == limit) {
        items.add(new Cut());
        break;
      }
      items.add(t.isNull(i) ? null : value(t.slice(i), limit));
    }
    return items;
  }

  private static Object scalar(Tensor t) {
    DType d = t.dtype();
    return switch (d) {
      case BOOL -> t.getBoolean(0);
      case INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32 -> t.getAsLong(0);
      case UINT64 -> new BigInteger(Long.toUnsignedString(t.getLong(0)));
      case FLOAT16, BFLOAT16, FLOAT32 -> (float) t.getAsDouble(0);
      case FLOAT64 -> t.getDouble(0);
      case COMPLEX64 -> new Complex(t.data().getFloat(0), t.data().getFloat(4));
      case COMPLEX128 -> new Complex(t.data().getDouble(0), t.data().getDouble(8));
      case STRING -> t.getString();
      case BYTES -> {
        ByteBuffer b = t.bytesAt(0);
        byte[] a = new byte[b.remaining()];
        b.get(a);
        yield a;
      }
    };
  }

  /** One row as a JSON object: fields in the dataset's order. */
  static String jsonLine(Map<String, Object> row) {
    StringWriter s = new StringWriter();
    try (JsonGenerator g = JSON.getFactory().createGenerator(s)) {
      g.writeStartObject();
      for (Map.Entry<String, Object> f : row.entrySet()) {
        g.writeFieldName(f.getKey());
        writeJson(g, f.getValue());
      }
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return s.toString();
  }

  private static void writeJson(JsonGenerator g, Object v) throws IOException {
    if (v == null) {
      g.writeNull();
    } else if (v instanceof Boolean b) {
      g.writeBoolean(b);
    } else if (v instanceof Long l) {
      g.writeNumber(l);
    } else if (v instanceof BigInteger b) {
      g.writeNumber(b);
    } else if (v instanceof Float f) {
      if (Float.isFinite(f)) {
        g.writeNumber(f);
      } else {
        g.writeString(f.toString());
      }
    } else if (v instanceof Double d) {
      if (Double.isFinite(d)) {
        g.writeNumber(d);
      } else {
        g.writeString(d.toString());
      }
    } else if (v instanceof Complex c) {
      g.writeStartArray();
      writeJson(g, c.re());
      writeJson(g, c.im());
      g.writeEndArray();
    } else if (v instanceof String s) {
      g.writeString(s);
    } else if (v instanceof byte[] a) {
      g.writeString(Base64.getEncoder().encodeToString(a));
    } else if (v instanceof List<?> list) {
      g.writeStartArray();
      for (Object o : list) {
        writeJson(g, o);
      }
      g.writeEndArray();
    } else {
      throw new IllegalStateException("no JSON for " + v.getClass());
    }
  }

  /** The aligned table: a {@code #} column of source indices, then one column per field. */
  static String table(List<String> names, List<Long> indices, List<Map<String, Object>> values) {
    List<String[]> cells = new ArrayList<>();
    String[] header = new String[names.size() + 1];
    header[0] = "#";
    for (int c = 0; c < names.size(); c++) {
      header[c + 1] = names.get(c);
    }
    cells.add(header);
    for (int r = 0; r < values.size(); r++) {
      String[] line = new String[names.size() + 1];
      line[0] = Long.toString(indices.get(r));
      for (int c = 0; c < names.size(); c++) {
        StringBuilder sb = new StringBuilder();
        text(sb, values.get(r).get(names.get(c)));
        line[c + 1] = sb.toString();
      }
      cells.add(line);
    }
    int[] width = new int[header.length];
    for (String[] line : cells) {
      for (int c = 0; c < line.length; c++) {
        width[c] = Math.max(width[c], line[c].codePointCount(0, line[c].length()));
      }
    }
    StringBuilder out = new StringBuilder();
    for (String[] line : cells) {
      StringBuilder l = new StringBuilder();
      for (int c = 0; c < line.length; c++) {
        if (c > 0) {
          l.append("  ");
        }
        l.append(line[c]);
        if (c < line.length - 1) {
          l.append(" ".repeat(width[c] - line[c].codePointCount(0, line[c].length())));
        }
      }
      out.append(l.toString().stripTrailing()).append('\n');
    }
    return out.toString();
  }

  private static void text(StringBuilder sb, Object v) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof Cut) {
      sb.append('…');
    } else if (v instanceof Float f) {
      sb.append(f);
    } else if (v instanceof Double d) {
      sb.append(d);
    } else if (v instanceof Complex c) {
      sb.append('(').append(c.re()).append(c.im() < 0 || Double.isNaN(c.im()) ? "" : "+").append(c.im()).append("j)");
    } else if (v instanceof String s) {
      quoted(sb, s);
    } else if (v instanceof byte[] a) {
      blob(sb, a);
    } else if (v instanceof List<?> list) {
      sb.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          sb.append(", ");
        }
        text(sb, list.get(i));
      }
      sb.append(']');
    } else {
      sb.append(v);
    }
  }

  /** {@code s} in double quotes, escaped as JSON does, cut after {@link #TABLE_CHARS} code points. */
  private static void quoted(StringBuilder sb, String s) {
    sb.append('"');
    int count = 0;
    for (int i = 0; i < s.length(); count++) {
      if (count == TABLE_CHARS) {
        sb.append('…');
        break;
      }
      int cp = s.codePointAt(i);
      i += Character.charCount(cp);
      switch (cp) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (cp < 0x20 || cp == 0x7f || Character.getType(cp) == Character.LINE_SEPARATOR
              || Character.getType(cp) == Character.PARAGRAPH_SEPARATOR) {
            sb.append(String.format(Locale.ROOT, "\\u%04x", cp));
          } else {
            sb.appendCodePoint(cp);
          }
        }
      }
    }
    sb.append('"');
  }

  /** {@code a} as {@code b"..."}: printable ASCII as itself, other bytes as {@code \xNN}. */
  private static void blob(StringBuilder sb, byte[] a) {
    sb.append("b\"");
    for (int i = 0; i < a.length; i++) {
      if (i == TABLE_CHARS) {
        sb.append('…');
        break;
      }
      int b = a[i] & 0xff;
      if (b == '"' || b == '\\') {
        sb.append('\\').append((char) b);
      } else if (b >= 0x20 && b < 0x7f) {
        sb.append((char) b);
      } else {
        sb.append(String.format(Locale.ROOT, "\\x%02x", b));
      }
    }
    sb.append('"');
  }
}
