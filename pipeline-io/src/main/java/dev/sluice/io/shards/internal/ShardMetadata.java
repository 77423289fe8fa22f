package dev.sluice.io.shards.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.core.DType;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.internal.shardfile.ShardFile;
import dev.sluice.io.internal.JsonFiles;
import dev.sluice.io.shards.ShardInfo;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The {@code metadata.json} of a shard set: format name and version, the fields, {@code dataset_len},
 * {@code num_shards}, and per shard its file name, rows, bytes and checksum.
 *
 * @param file where it was read from (null for one being written)
 */
public record ShardMetadata(Path file, Schema schema, List<ShardInfo> shards) {
  public static final String FILE_NAME = "metadata.json";
  public static final String FORMAT = "sluice-shards";
  private static final Pattern CHECKSUM = Pattern.compile("crc32c:[0-9a-f]{8}");

  public ShardMetadata {
    shards = List.copyOf(shards);
  }

  /** Rows of every shard. */
  public long rows() {
    long n = 0;
    for (ShardInfo s : shards) {
      n += s.rows();
    }
    return n;
  }

  /** The JSON text, byte for byte the same for the same content on every platform. */
  public byte[] toJson() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    DefaultIndenter lf = new DefaultIndenter("  ", "\n");
    DefaultPrettyPrinter pretty = new DefaultPrettyPrinter().withObjectIndenter(lf);
    try (JsonGenerator g = new JsonFactory().createGenerator(out)) {
      g.setPrettyPrinter(pretty);
      g.writeStartObject();
      g.writeStringField("format", FORMAT);
      g.writeNumberField("version", ShardFile.VERSION);
      g.writeNumberField("dataset_len", rows());
      g.writeNumberField("num_shards", shards.size());
      g.writeArrayFieldStart("fields");
      for (TensorSpec f : schema.fields()) {
        g.writeStartObject();
        g.writeStringField("name", f.name());
        g.writeStringField("dtype", f.dtype().numpyName());
        g.writeFieldName("shape");
        g.writeArray(f.shape().dims(), 0, f.shape().rank());
        g.writeBooleanField("nullable", f.nullable());
        if (f.raggedRank() > 0) {
          g.writeArrayFieldStart("nullable_elements");
          for (int j = 0; j < f.raggedRank(); j++) {
            g.writeBoolean(f.elementsNullable(j));
          }
          g.writeEndArray();
        }
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeArrayFieldStart("shards");
      for (ShardInfo s : shards) {
        g.writeStartObject();
        g.writeStringField("file", s.file());
        g.writeNumberField("rows", s.rows());
        g.writeNumberField("bytes", s.bytes());
        g.writeStringField("checksum", s.checksum());
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeEndObject();
      g.writeRaw('\n');
    } catch (IOException e) {
      throw new IllegalStateException("writing JSON to memory failed", e);
    }
    return out.toByteArray();
  }

  /** True when {@code file} starts like our metadata (the format key is written first). */
  public static boolean looksLikeOurs(Path file) throws IOException {
    byte[] head = new byte[256];
    int n;
    try (var in = Files.newInputStream(file)) {
      n = in.readNBytes(head, 0, head.length);
    }
    return new String(head, 0, n, java.nio.charset.StandardCharsets.UTF_8).contains("\"" + FORMAT + "\"");
  }

  /**
   * Reads and checks {@code dir/metadata.json}.
   *
   * @throws DatasetFormatException naming the file and the key for anything malformed or inconsistent
   */
  public static ShardMetadata read(Path dir) {
    Path file = dir.resolve(FILE_NAME);
    return parse(file, file.toString(), JsonFiles.readObject(file));
  }

  /**
   * Checks the {@code metadata.json} object {@code root}, read from {@code resource}.
   *
   * @param file the path recorded in the result
   */
  public static ShardMetadata parse(Path file, String resource, JsonNode root) {
    String format = text(resource, root, "format");
    if (!FORMAT.equals(format)) {
      throw new DatasetFormatException(resource, "key format", "expected \"" + FORMAT + "\" but found \"" + format + "\"");
    }
    long version = integer(resource, root, "version");
    if (version != ShardFile.VERSION) {
      throw new UnsupportedFormatException(resource, "key version", "shard set version " + version
          + " is not supported (this version of Sluice reads version " + ShardFile.VERSION + ")");
    }
    JsonNode fieldsNode = array(resource, root, "fields");
    List<TensorSpec> specs = new ArrayList<>();
    for (int i = 0; i < fieldsNode.size(); i++) {
      specs.add(field(resource, "fields[" + i + "]", fieldsNode.get(i)));
    }
    Schema schema;
    try {
      schema = Schema.of(specs);
    } catch (IllegalArgumentException e) {
      throw new DatasetFormatException(resource, "key fields", e.getMessage());
    }
    JsonNode shardsNode = array(resource, root, "shards");
    List<ShardInfo> shards = new ArrayList<>();
    Set<String> names = new HashSet<>();
    long total = 0;
    for (int i = 0; i < shardsNode.size(); i++) {
      String key = "shards[" + i + "]";
      JsonNode s = shardsNode.get(i);
      if (!s.isObject()) {
        throw new DatasetFormatException(resource, "key " + key, "expected an object but found " + s);
      }
      String name = text(resource, s, key, "file");
      if (name.isEmpty() || name.contains("/") || name.contains("\\") || name.equals(".") || name.equals("..")
          || name.equals(FILE_NAME)) {
        throw new DatasetFormatException(resource, "key " + key + ".file", "expected a file name in the shard "
            + "set's directory but found \"" + name + "\"");
      }
      if (!names.add(name)) {
        throw new DatasetFormatException(resource, "key " + key + ".file", "\"" + name + "\" is listed twice");
      }
      long rows = integer(resource, s, key, "rows");
      long bytes = integer(resource, s, key, "bytes");
      String checksum = text(resource, s, key, "checksum");
      if (!CHECKSUM.matcher(checksum).matches()) {
        throw new DatasetFormatException(resource, "key " + key + ".checksum", "expected \"crc32c:\" and 8 "
            + "lowercase hex digits but found \"" + checksum + "\"");
      }
      if (bytes < ShardFile.MIN_BYTES) {
        throw new DatasetFormatException(resource, "key " + key + ".bytes", "expected at least "
            + ShardFile.MIN_BYTES + " (a header and a footer) but found " + bytes);
      }
      try {
        total = Math.addExact(total, rows);
      } catch (ArithmeticException e) {
        throw new DatasetFormatException(resource, "key " + key + ".rows", rows + " rows after the " + total
            + " of the shards before it are more rows than a dataset can index (" + Long.MAX_VALUE + ")");
      }
      shards.add(new ShardInfo(name, rows, bytes, checksum));
    }
    ShardMetadata m = new ShardMetadata(file, schema, shards);
    if (root.has("num_shards") && integer(resource, root, "num_shards") != shards.size()) {
      throw new DatasetFormatException(resource, "key num_shards", "says " + root.get("num_shards") + " but "
          + shards.size() + " shards are listed");
    }
    if (root.has("dataset_len") && integer(resource, root, "dataset_len") != m.rows()) {
      throw new DatasetFormatException(resource, "key dataset_len", "says " + root.get("dataset_len")
          + " rows but the shards listed hold " + m.rows());
    }
    return m;
  }

  private static TensorSpec field(String resource, String key, JsonNode f) {
    if (!f.isObject()) {
      throw new DatasetFormatException(resource, "key " + key, "expected an object but found " + f);
    }
    String name = text(resource, f, key, "name");
    DType dtype;
    try {
      dtype = DType.fromName(text(resource, f, key, "dtype"));
    } catch (IllegalArgumentException e) {
      throw new DatasetFormatException(resource, "key " + key + ".dtype", e.getMessage());
    }
    JsonNode shape = f.get("shape");
    if (shape == null || !shape.isArray()) {
      throw new DatasetFormatException(resource, "key " + key + ".shape", "expected a list of integers but found " + shape);
    }
    long[] dims = new long[shape.size()];
    for (int i = 0; i < dims.length; i++) {
      JsonNode d = shape.get(i);
      if (!d.isIntegralNumber() || !d.canConvertToLong() || d.asLong() < -1) {
        throw new DatasetFormatException(resource, "key " + key + ".shape", "expected integers >= 0 (or -1 for a "
            + "variable dimension) but found " + shape);
      }
      dims[i] = d.asLong();
    }
    boolean nullable = false;
    if (f.has("nullable")) {
      if (!f.get("nullable").isBoolean()) {
        throw new DatasetFormatException(resource, "key " + key + ".nullable", "expected true or false but found "
            + f.get("nullable"));
      }
      nullable = f.get("nullable").asBoolean();
    }
    if (name.isEmpty()) {
      throw new DatasetFormatException(resource, "key " + key + ".name", "a field name must not be empty");
    }
    int elements = 0;
    JsonNode ne = f.get("nullable_elements");
    if (ne != null) {
      if (!ne.isArray()) {
        throw new DatasetFormatException(resource, "key " + key + ".nullable_elements", "expected a list of true or"
            + " false, one per variable dimension, but found " + ne);
      }
      for (int j = 0; j < ne.size(); j++) {
        if (!ne.get(j).isBoolean() || j >= 31) {
          throw new DatasetFormatException(resource, "key " + key + ".nullable_elements", "expected a list of true or"
              + " false, one per variable dimension, but found " + ne);
        }
        if (ne.get(j).asBoolean()) {
          elements |= 1 << j;
        }
      }
    }
    checkItemBytes(resource, key, dims, dtype);
    try {
      TensorSpec spec = new TensorSpec(name, dtype, Shape.of(dims), nullable, elements);
      if (ne != null && ne.size() != spec.raggedRank()) {
        throw new IllegalArgumentException("nullable_elements has " + ne.size() + " entries but the shape "
            + spec.shape() + " has " + spec.raggedRank() + " variable dimension(s)");
      }
      return spec;
    } catch (IllegalArgumentException e) {
      throw new DatasetFormatException(resource, "key " + key, e.getMessage());
    }
  }

  /**
   * The fixed dimensions of a field (a row of a fixed-length field, an item of a list) of
   * {@code dtype} must make at most {@link Integer#MAX_VALUE} bytes: one value is one tensor.
   */
  private static void checkItemBytes(String resource, String key, long[] dims, DType dtype) {
    if (dtype.isVariableLength()) {
      return;
    }
    BigInteger bytes = BigInteger.valueOf(dtype.byteSize());
    for (long d : dims) {
      if (d >= 0) {
        bytes = bytes.multiply(BigInteger.valueOf(d));
      }
    }
    if (bytes.compareTo(BigInteger.valueOf(Integer.MAX_VALUE)) > 0) {
      throw new DatasetFormatException(resource, "key " + key + ".shape", "shape " + Arrays.toString(dims) + " of "
          + dtype.numpyName() + " makes values of " + bytes + " bytes, more than one value can hold ("
          + Integer.MAX_VALUE + ")");
    }
  }

  private static JsonNode array(String resource, JsonNode root, String key) {
    JsonNode n = root.get(key);
    if (n == null || !n.isArray()) {
      throw new DatasetFormatException(resource, "key " + key, "expected a list but found " + n);
    }
    return n;
  }

  private static String text(String resource, JsonNode node, String key) {
    return text(resource, node, null, key);
  }

  private static String text(String resource, JsonNode node, String parent, String key) {
    JsonNode n = node.get(key);
    if (n == null || !n.isTextual()) {
      throw new DatasetFormatException(resource, "key " + (parent == null ? key : parent + "." + key),
          "expected a string but found " + n);
    }
    return n.asText();
  }

  private static long integer(String resource, JsonNode node, String key) {
    return integer(resource, node, null, key);
  }

  private static long integer(String resource, JsonNode node, String parent, String key) {
    JsonNode n = node.get(key);
    if (n == null || !n.isIntegralNumber() || !n.canConvertToLong() || n.asLong() < 0) {
      throw new DatasetFormatException(resource, "key " + (parent == null ? key : parent + "." + key),
          "expected an integer >= 0 but found " + n);
    }
    return n.asLong();
  }
}
