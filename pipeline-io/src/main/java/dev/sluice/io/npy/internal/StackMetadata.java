package dev.sluice.io.npy.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.core.DType;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Shape;
import dev.sluice.io.internal.JsonFiles;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The {@code metadata.json} a sharding job writes beside an npy stack: {@code dtype} (a NumPy name
 * such as {@code "float32"} or a descr such as {@code "<f4"}), {@code dataset_len},
 * {@code num_shards} and shape keys such as {@code x_shape} (the shape of the whole stacked array).
 * Unknown keys are ignored.
 */
final class StackMetadata {
  final String file; // the file's path or URI, for messages
  final List<NpyField> fields; // null when there is no dtype key
  final boolean byteOrderGiven;
  final String dtypeText;
  final long datasetLen; // -1 when absent
  final int numShards; // -1 when absent
  final String shapeName; // the <name> of the single <name>_shape key, or null
  final long[] shape; // null when absent

  private StackMetadata(String file, List<NpyField> fields, boolean byteOrderGiven, String dtypeText, long datasetLen,
      int numShards, String shapeName, long[] shape) {
    this.file = file;
    this.fields = fields;
    this.byteOrderGiven = byteOrderGiven;
    this.dtypeText = dtypeText;
    this.datasetLen = datasetLen;
    this.numShards = numShards;
    this.shapeName = shapeName;
    this.shape = shape;
  }

  static StackMetadata read(Path file, String defaultFieldName) {
    return read(file.toString(), JsonFiles.readObject(file), defaultFieldName);
  }

  /** The metadata in {@code root}, read from {@code resource} (a local path or a URI). */
  static StackMetadata read(String resource, JsonNode root, String defaultFieldName) {
    long len = -1;
    if (root.has("dataset_len")) {
      JsonNode n = root.get("dataset_len");
      if (!n.canConvertToLong() || !n.isIntegralNumber() || n.asLong() < 0) {
        throw new DatasetFormatException(resource, "key dataset_len", "expected an integer >= 0 but found " + n);
      }
      len = n.asLong();
    }
    int shards = -1;
    if (root.has("num_shards")) {
      JsonNode n = root.get("num_shards");
      if (!n.isIntegralNumber() || !n.canConvertToInt() || n.asInt() < 0) {
        throw new DatasetFormatException(resource, "key num_shards", "expected an integer >= 0 but found " + n);
      }
      shards = n.asInt();
    }
    String shapeName = null;
    long[] shape = null;
    int shapeKeys = 0;
    for (Map.Entry<String, JsonNode> e : root.properties()) {
      if (!e.getKey().endsWith("_shape") || e.getKey().equals("_shape") || !e.getValue().isArray()) {
        continue; // shard_shapes and other keys are ignored
      }
      shapeKeys++;
      shapeName = e.getKey().substring(0, e.getKey().length() - "_shape".length());
      JsonNode a = e.getValue();
      shape = new long[a.size()];
      for (int i = 0; i < shape.length; i++) {
        if (!a.get(i).isIntegralNumber() || !a.get(i).canConvertToLong() || a.get(i).asLong() < 0) {
          throw new DatasetFormatException(resource, "key " + e.getKey(), "expected a list of integers >= 0 but found " + a);
        }
        shape[i] = a.get(i).asLong();
      }
    }
    if (shapeKeys > 1) {
      shapeName = null;
      shape = null; // several arrays' shapes: not ours to choose; the chunk headers answer
    }
    if (shape != null && shape.length == 0) {
      throw new DatasetFormatException(resource, "key " + shapeName + "_shape",
          "the shape of a stack needs at least one dimension (the rows)");
    }
    if (shape != null && len >= 0 && shape[0] != len) {
      throw new DatasetFormatException(resource, "key " + shapeName + "_shape",
          "starts with " + shape[0] + " rows but dataset_len is " + len);
    }
    List<NpyField> fields = null;
    boolean orderGiven = false;
    String dtypeText = null;
    if (root.has("dtype")) {
      JsonNode d = root.get("dtype");
      if (!d.isTextual()) {
        throw new DatasetFormatException(resource, "key dtype", "expected a string but found " + d);
      }
      dtypeText = d.asText();
      String fieldName = shapeName != null ? shapeName : defaultFieldName;
      fields = parseDtype(resource, dtypeText, fieldName);
      char c = dtypeText.isEmpty() ? ' ' : dtypeText.charAt(0);
      orderGiven = c == '<' || c == '>' || c == '[';
    }
    if (shape != null && fields != null) {
      checkRowBytes(resource, shapeName, shape, fields);
    }
    return new StackMetadata(resource, fields, orderGiven, dtypeText, len, shards, shapeName, shape);
  }

  /** A row (the shape without its first dimension, of the dtype's items) must fit in one tensor. */
  private static void checkRowBytes(String resource, String shapeName, long[] shape, List<NpyField> fields) {
    BigInteger items = BigInteger.ONE;
    for (int i = 1; i < shape.length; i++) {
      items = items.multiply(BigInteger.valueOf(shape[i]));
    }
    for (NpyField f : fields) {
      BigInteger bytes = items.multiply(BigInteger.valueOf(f.byteSize()));
      if (bytes.compareTo(BigInteger.valueOf(Integer.MAX_VALUE)) > 0) {
        throw new DatasetFormatException(resource, "key " + shapeName + "_shape", "rows of shape "
            + NpyHeader.tuple(java.util.Arrays.copyOfRange(shape, 1, shape.length)) + " of " + f.dtype() + " are "
            + bytes + " bytes each, more than a row can hold (" + Integer.MAX_VALUE + ")");
      }
    }
  }

  private static List<NpyField> parseDtype(String resource, String text, String fieldName) {
    String t = text.trim();
    if (t.startsWith("[")) {
      Object parsed;
      try {
        parsed = PyLiteral.parse(t);
      } catch (IllegalArgumentException e) {
        throw new DatasetFormatException(resource, "key dtype", "malformed dtype '" + text + "': " + e.getMessage());
      }
      // reuse the header parser on a synthetic header dict
      List<NpyField> out = new ArrayList<>();
      for (Object entry : (List<?>) parsed) {
        if (!(entry instanceof List<?> f) || f.size() < 2 || !(f.get(0) instanceof String n) || !(f.get(1) instanceof String fd)) {
          throw new DatasetFormatException(resource, "key dtype", "malformed dtype entry " + entry);
        }
        if (n.isEmpty()) {
          continue;
        }
        Shape sub = Shape.scalar();
        if (f.size() == 3 && f.get(2) instanceof List<?> dims) {
          long[] d = new long[dims.size()];
          for (int i = 0; i < d.length; i++) {
            if (!(dims.get(i) instanceof Long dim) || dim < 0) {
              throw new DatasetFormatException(resource, "key dtype", "malformed dtype entry " + entry
                  + ": a subarray shape is a tuple of integers >= 0");
            }
            d[i] = dim;
          }
          sub = Shape.of(d);
        }
        NpyField field = NpyHeader.simpleField(resource, n, fd, sub, 0);
        try {
          field.byteSize();
        } catch (ArithmeticException e) {
          throw new DatasetFormatException(resource, "key dtype", "dtype entry " + entry + " makes an item of more"
              + " than " + Integer.MAX_VALUE + " bytes");
        }
        out.add(field);
      }
      return out;
    }
    try {
      DType dt = DType.fromName(t);
      if (dt.isVariableLength()) {
        throw new DatasetFormatException(resource, "key dtype", "dtype '" + text + "' is not a numeric dtype");
      }
      return List.of(new NpyField(fieldName, dt, Shape.scalar(), 0, false));
    } catch (IllegalArgumentException notAName) {
      return List.of(NpyHeader.simpleField(resource, fieldName, t, Shape.scalar(), 0));
    }
  }
}
