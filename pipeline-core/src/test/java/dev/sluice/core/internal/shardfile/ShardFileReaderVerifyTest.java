package dev.sluice.core.internal.shardfile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ShardFileReader#verify()} reports a file that shrinks under its mapping as a data error. */
class ShardFileReaderVerifyTest {
  private static final int ROWS = 20_000;
  private static final List<TensorSpec> SPECS = List.of(new TensorSpec("x", DType.FLOAT32, Shape.of(16)));
  private static final List<FieldLayout> LAYOUTS = FieldLayout.of(SPECS);

  @TempDir Path dir;
  private final MemoryManager memory = new MemoryManager();

  @AfterEach
  void nothingOutstanding() {
    memory.checkNoOutstanding();
  }

  private Path write() {
    Path file = dir.resolve("a.shard");
    ByteBuffer values = ByteBuffer.allocate(ROWS * 16 * 4).order(ByteOrder.LITTLE_ENDIAN);
    long[] indices = new long[ROWS];
    for (int r = 0; r < ROWS; r++) {
      values.putFloat(r * 16 * 4, r);
      indices[r] = r;
    }
    Column x = Column.of(SPECS.get(0), ROWS, Tensor.wrap(DType.FLOAT32, Shape.of(ROWS, 16), values), List.of(),
        Collections.singletonList(null));
    try (ShardFileWriter w = ShardFileWriter.create(file, LAYOUTS, ROWS, memory.pool("test.verify"));
        Batch batch = Batch.of(Schema.of(SPECS), List.of(x), indices, () -> { })) {
      w.write(batch);
      w.finish();
    }
    return file;
  }

  @Test
  void aFileTruncatedAfterOpenFailsVerifyAsChangedWhileMapped() throws Exception {
    Path file = write();
    try (ShardFileReader r = ShardFileReader.open(file, LAYOUTS, Integer.MAX_VALUE, new ShardFileReader.Expectations() {})) {
      r.verify(); // whole: passes
      try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
        ch.truncate(4096);
      }
      assertThatThrownBy(r::verify).isInstanceOf(DatasetFormatException.class)
          .hasMessageContaining("a.shard changed while mapped");
    }
    assertThat(memory.outstandingBytes()).isZero();
  }
}
