package dev.sluice.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.sluice.core.DType;
import dev.sluice.core.Dataset;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/** The canonical bytes (see {@link Checksums}), written out by hand for each kind of field. */
class ChecksumsTest {

  private record Source(Schema schema, List<Example> examples) implements Dataset<Example>, HasSchema {
    @Override
    public Flux<Example> flux(PipelineContext context) {
      return Flux.fromIterable(examples);
    }
  }

  private static final class Canon {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();

    Canon count(long n) {
      out.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(n).array());
      return this;
    }

    Canon bytes(byte... b) {
      out.writeBytes(b);
      return this;
    }

    Canon tensor(Tensor t) {
      return bytes(t.toByteArray());
    }

    String sha() throws Exception {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(out.toByteArray()));
    }
  }

  @Test
  void fieldsInNameOrder_variableLengthCounted_nullableFlagged() throws Exception {
    Schema schema = Schema.of(
        new TensorSpec("z", DType.INT32, Shape.of(2)),
        new TensorSpec("tokens", DType.INT64, Shape.of(-1)),
        new TensorSpec("name", DType.STRING, Shape.scalar(), true),
        new TensorSpec("a", DType.FLOAT32, Shape.scalar(), true));
    Example e0 = Example.builder(0).put("z", Tensor.of(1, 2)).put("tokens", Tensor.of(7L, 8L, 9L))
        .put("name", Tensor.ofString("héllo")).put("a", Tensor.scalar(1.5f)).build();
    Example e1 = Example.builder(1).put("z", Tensor.of(3, 4)).put("tokens", Tensor.of(new long[0]))
        .putNull("name").putNull("a").build();
    Source src = new Source(schema, List.of(e0, e1));

    Canon c = new Canon();
    // row 0: a (nullable, valid), name (nullable, valid, 6 UTF-8 bytes), tokens (3 values), z
    c.bytes((byte) 1).tensor(Tensor.scalar(1.5f));
    c.bytes((byte) 1).count(6).bytes("héllo".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    c.count(3).tensor(Tensor.of(7L, 8L, 9L));
    c.tensor(Tensor.of(1, 2));
    // row 1: a null (flag 0 + 4 zero bytes), name null (flag 0 + count 0), tokens empty, z
    c.bytes((byte) 0).bytes(new byte[4]);
    c.bytes((byte) 0).count(0);
    c.count(0);
    c.tensor(Tensor.of(3, 4));
    assertEquals(c.sha(), Checksums.sha256(src));

    Canon onlyZ = new Canon().tensor(Tensor.of(1, 2)).tensor(Tensor.of(3, 4));
    assertEquals(onlyZ.sha(), Checksums.sha256(src, List.of("z")));
  }

  @Test
  void nestedValuesAreCountedAtEveryLevelAndNullableElementsFlagged() throws Exception {
    byte[] ab = "ab".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    Schema schema = Schema.of(
        new TensorSpec("tags", DType.STRING, Shape.of(-1), true).withElementsNullable(0, true),
        new TensorSpec("grid", DType.INT32, Shape.of(-1, -1), false, 0b10),
        new TensorSpec("pts", DType.FLOAT32, Shape.of(-1, 2)));
    Example e0 = Example.builder(0)
        .put("tags", Tensor.ofStrings("ab", null, ""))
        .put("grid", Tensor.listOf(Tensor.of(1, 2), Tensor.listOf(DType.INT32, java.util.Arrays.asList(null,
            Tensor.wrap(DType.INT32, Shape.scalar(), ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 5))))))
        .put("pts", Tensor.listOf(Tensor.of(1f, 2f), Tensor.of(3f, 4f)))
        .build();
    Example e1 = Example.builder(1).putNull("tags")
        .put("grid", Tensor.wrapRagged(DType.INT32, Shape.of(0, -1), ByteBuffer.allocate(0), List.of(ByteBuffer.allocate(8)), List.of()))
        .put("pts", Tensor.wrap(DType.FLOAT32, Shape.of(0, 2), ByteBuffer.allocate(0)))
        .build();
    Source src = new Source(schema, List.of(e0, e1));

    Canon c = new Canon();
    // row 0, grid: 2 lists (level-0 elements are not nullable: no flags), [1, 2] and [null, 5],
    // whose elements (level 1, nullable) each carry a flag byte
    c.count(2);
    c.count(2).bytes((byte) 1).tensor(Tensor.of(1)).bytes((byte) 1).tensor(Tensor.of(2));
    c.count(2).bytes((byte) 0).bytes(new byte[4]).bytes((byte) 1).tensor(Tensor.of(5));
    // pts: 2 elements of 2 floats (a count of elements, not of floats)
    c.count(2).tensor(Tensor.of(1f, 2f, 3f, 4f));
    // tags: row flag, 3 strings, each flagged, a null string is a count of 0
    c.bytes((byte) 1).count(3).bytes((byte) 1).count(2).bytes(ab).bytes((byte) 0).count(0).bytes((byte) 1).count(0);
    // row 1: an empty list of lists, no points, a null row of tags
    c.count(0);
    c.count(0);
    c.bytes((byte) 0).count(0);
    assertEquals(c.sha(), Checksums.sha256(src));

    Example unflagged = e0.with("pts", Tensor.listOf(DType.FLOAT32, java.util.Arrays.asList(Tensor.of(1f, 2f), null)));
    IllegalArgumentException err = assertThrows(IllegalArgumentException.class,
        () -> Checksums.sha256(new Source(schema, List.of(unflagged)), List.of("pts")));
    assertEquals(true, err.getMessage().contains("null elements at list level 0"), err.getMessage());
  }

  @Test
  void fieldOrderOfTheSourceDoesNotMatter_valuesDo() {
    String a = Checksums.sha256(Datasets.synthetic(50, 4, 1));
    Source reordered = new Source(Schema.of(new TensorSpec("label", DType.INT64, Shape.scalar()),
        new TensorSpec("x", DType.FLOAT32, Shape.of(4))),
        Datasets.synthetic(50, 4, 1).flux().collectList().block());
    assertEquals(a, Checksums.sha256(reordered));
    assertNotEquals(a, Checksums.sha256(Datasets.synthetic(50, 4, 2)));
  }

  @Test
  void unknownColumnNamesTheFields() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Checksums.sha256(Datasets.range(3), List.of("nope")));
    assertEquals(true, e.getMessage().contains("nope") && e.getMessage().contains("value"), e.getMessage());
  }
}
