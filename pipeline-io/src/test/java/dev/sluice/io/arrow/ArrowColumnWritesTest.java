package dev.sluice.io.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Split;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.ColumnBuffers;
import dev.sluice.core.testing.NoLeaks;
import java.io.FileOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.impl.UnionLargeListWriter;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The columns the Arrow reader converts are written through the column builder (pooled memory the
 * batch owns and gives back), and the columns the file's layout lets it share stay views of the
 * file, holding no pooled memory.
 */
@ExtendWith(NoLeaks.class)
class ArrowColumnWritesTest {
  private static final int ROWS = 300;

  @TempDir
  Path dir;

  @Test
  void convertedColumnsHoldPooledMemoryUntilTheirBatchIsClosed() throws Exception {
    Path f = dir.resolve("nulls.arrow");
    write(f, true);
    BufferPool pool = MemoryManager.shared().pool(ArrowOptions.STAGE);
    try (ArrowDataset ds = Arrow.open(f)) {
      Split s = ds.splits().get(0);
      List<Batch> batches = ds.readBatches(s, 0, Long.MAX_VALUE, 64).collectList().block();
      try {
        assertThat(pool.outstandingBytes()).isPositive();
        long row = 0;
        for (Batch b : batches) {
          Column x = b.column("x");
          Column label = b.column("label");
          for (int r = 0; r < b.size(); r++, row++) {
            boolean nullRow = row % 7 == 3;
            assertThat(!x.isValid(r)).as("x row %d", row).isEqualTo(nullRow);
            assertThat(!label.isValid(r)).as("label row %d", row).isEqualTo(row % 5 == 1);
            long items = x.offsets().data().getLong((r + 1) * 8) - x.offsets().data().getLong(r * 8);
            assertThat(items).as("x row %d", row).isEqualTo(nullRow ? 0 : row % 4 + 1);
          }
        }
        assertThat(row).isEqualTo(ROWS);
      } finally {
        batches.forEach(Batch::close);
      }
      assertThat(pool.outstandingBytes()).isZero();
    }
  }

  @Test
  void sharedColumnsHoldNoPooledMemory() throws Exception {
    // one batch of the whole record batch: its int64 offsets start at 0, so they are shared too
    Path f = dir.resolve("plain.arrow");
    write(f, false);
    BufferPool pool = MemoryManager.shared().pool(ArrowOptions.STAGE);
    try (ArrowDataset ds = Arrow.open(f)) {
      Split s = ds.splits().get(0);
      List<Batch> batches = ds.readBatches(s, 0, Long.MAX_VALUE, ROWS).collectList().block();
      try {
        assertThat(pool.outstandingBytes()).isZero();
        assertThat(batches).hasSize(1);
        assertThat(batches.get(0).column("label").values().data().getLong(8 * 64)).isEqualTo(64);
        assertThat(batches.get(0).column("x").offsets().data().getLong(8 * ROWS)).isEqualTo(ROWS / 4 * 10);
      } finally {
        batches.forEach(Batch::close);
      }
    }
  }

  @Test
  void convertedNullFlagsAloneHoldOnlyTheFlags() throws Exception {
    // int64 offsets from 0 and values shared with the file, null flags converted: the column's
    // buffers are allocated as they are written, so the batch holds its flags and nothing else
    Path f = dir.resolve("flags.arrow");
    writeEmptyNullRows(f);
    BufferPool pool = MemoryManager.shared().pool(ArrowOptions.STAGE);
    try (ArrowDataset ds = Arrow.open(f)) {
      List<Batch> batches = ds.readBatches(ds.splits().get(0), 0, Long.MAX_VALUE, ROWS).collectList().block();
      try {
        assertThat(batches).hasSize(1);
        assertThat(pool.outstandingBytes()).isEqualTo(ROWS);
        Column x = batches.get(0).column("x");
        for (int r = 0; r < ROWS; r++) {
          assertThat(!x.isValid(r)).as("x row %d", r).isEqualTo(r % 7 == 3);
          long items = x.offsets().data().getLong((r + 1) * 8) - x.offsets().data().getLong(r * 8);
          assertThat(items).as("x row %d", r).isEqualTo(r % 7 == 3 ? 0 : r % 4 + 1);
        }
      } finally {
        batches.forEach(Batch::close);
      }
      assertThat(pool.outstandingBytes()).isZero();
    }
  }

  @Test
  void columnBuffersWrittenDirectlyMakeTheColumn() {
    TensorSpec spec = new TensorSpec("x", DType.INT32, Shape.of(-1), true);
    try (ColumnBuffers c = ColumnBuffers.create(spec, 3, MemoryManager.shared().pool("test"))) {
      assertThat(c.validity(0, 3)).isNull();
      ByteBuffer flags = c.validityBuffer(0, 3);
      assertThat(List.of(flags.get(0), flags.get(1), flags.get(2))).containsExactly((byte) 1, (byte) 1, (byte) 1);
      flags.put(1, (byte) 0);
      assertThat(c.validityBuffer(0, 3).get(1)).isZero();
      ByteBuffer off = c.offsetsBuffer(0, 1000); // grows past the capacity
      assertThat(off.capacity()).isGreaterThanOrEqualTo(8 * 1001);
      assertThat(c.validity(0, 3).data().get(1)).isZero();
      assertThat(c.validity(0, 3).data().get(2)).isEqualTo((byte) 1);
      assertThatThrownBy(() -> c.validityBuffer(0, 4)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("capacity 3");
      assertThatThrownBy(() -> c.offsetsBuffer(1, 1)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("offsetsBuffer got 1");
    }
    assertThat(ColumnBuffers.onHeap(spec, 2).validityBuffer(0, 2).isDirect()).isFalse();
    assertThatThrownBy(() -> BatchBuilder.onHeap(Schema.of(spec), 0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("capacity > 0 required but it was 0");
  }

  /**
   * {@code ROWS} rows of {@code x}, a nullable large list of 1 to 4 float32 whose null rows (every
   * seventh from row 3) span no values, and {@code label} (int64 = row, no nulls), in one record batch.
   */
  private static void writeEmptyNullRows(Path f) throws Exception {
    Field item = new Field("item", FieldType.notNullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
        null);
    Field x = new Field("x", FieldType.nullable(new ArrowType.LargeList()), List.of(item));
    Field label = new Field("label", FieldType.notNullable(new ArrowType.Int(64, true)), null);
    Random random = new Random(11);
    try (RootAllocator allocator = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(
            List.of(x, label)), allocator);
        FileOutputStream out = new FileOutputStream(f.toFile());
        ArrowFileWriter w = new ArrowFileWriter(root, null, out.getChannel())) {
      w.start();
      root.allocateNew();
      LargeListVector xv = (LargeListVector) root.getVector("x");
      UnionLargeListWriter lw = xv.getWriter();
      for (int i = 0; i < ROWS; i++) {
        lw.setPosition(i);
        lw.startList();
        for (int j = 0; i % 7 != 3 && j <= i % 4; j++) {
          lw.float4().writeFloat4(random.nextFloat());
        }
        lw.endList();
      }
      lw.setValueCount(ROWS);
      for (int i = 3; i < ROWS; i += 7) {
        BitVectorHelper.unsetBit(xv.getValidityBuffer(), i);
      }
      BigIntVector lv = (BigIntVector) root.getVector("label");
      for (int i = 0; i < ROWS; i++) {
        lv.setSafe(i, i);
      }
      lv.setValueCount(ROWS);
      root.setRowCount(ROWS);
      w.writeBatch();
      w.end();
    }
  }

  /**
   * {@code ROWS} rows of {@code x} (a list of 1 to 4 float32) and {@code label} (int64 = row) in
   * one record batch: with {@code nulls}, an int32-offset list with null rows that span values and
   * a label with nulls (what the reader converts); without, a large list and labels without nulls
   * (what it shares).
   */
  private static void write(Path f, boolean nulls) throws Exception {
    Field item = new Field("item", FieldType.notNullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
        null);
    Field x = new Field("x", nulls ? FieldType.nullable(new ArrowType.List())
        : FieldType.notNullable(new ArrowType.LargeList()), List.of(item));
    Field label = new Field("label", new FieldType(nulls, new ArrowType.Int(64, true), null), null);
    Random random = new Random(7);
    try (RootAllocator allocator = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(
            List.of(x, label)), allocator);
        FileOutputStream out = new FileOutputStream(f.toFile());
        ArrowFileWriter w = new ArrowFileWriter(root, null, out.getChannel())) {
      w.start();
      root.allocateNew();
      if (nulls) {
        UnionListWriter lw = ((ListVector) root.getVector("x")).getWriter();
        for (int i = 0; i < ROWS; i++) {
          lw.setPosition(i);
          lw.startList(); // a null row still spans values: the reader cuts them out
          for (int j = 0; j <= i % 4; j++) {
            lw.float4().writeFloat4(random.nextFloat());
          }
          lw.endList();
        }
        lw.setValueCount(ROWS);
        ListVector xv = (ListVector) root.getVector("x");
        for (int i = 3; i < ROWS; i += 7) {
          BitVectorHelper.unsetBit(xv.getValidityBuffer(), i); // keeps its offsets: a null row spanning values
        }
      } else {
        UnionLargeListWriter lw = ((LargeListVector) root.getVector("x")).getWriter();
        for (int i = 0; i < ROWS; i++) {
          lw.setPosition(i);
          lw.startList();
          for (int j = 0; j <= i % 4; j++) {
            lw.float4().writeFloat4(random.nextFloat());
          }
          lw.endList();
        }
        lw.setValueCount(ROWS);
      }
      BigIntVector lv = (BigIntVector) root.getVector("label");
      for (int i = 0; i < ROWS; i++) {
        if (nulls && i % 5 == 1) {
          lv.setNull(i);
        } else {
          lv.setSafe(i, i);
        }
      }
      lv.setValueCount(ROWS);
      root.setRowCount(ROWS);
      w.writeBatch();
      w.end();
    }
  }
}
