package dev.sluice.io.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.flatbuffers.FlatBufferBuilder;
import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Shape;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.parquet.ParquetTestFiles.Config;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flatbuf.Endianness;
import org.apache.arrow.flatbuf.Field;
import org.apache.arrow.flatbuf.FixedSizeList;
import org.apache.arrow.flatbuf.FloatingPoint;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.MetadataVersion;
import org.apache.arrow.flatbuf.Precision;
import org.apache.arrow.flatbuf.Schema;
import org.apache.arrow.flatbuf.Type;
import org.apache.parquet.column.ParquetProperties.WriterVersion;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** pyarrow declares a FixedSizeList in the {@code ARROW:schema} footer entry; Sluice reads it as a fixed shape. */
@ExtendWith(NoLeaks.class)
class ParquetArrowSchemaTest {
  @TempDir
  Path dir;

  /** The ARROW:schema value pyarrow writes for {@code x: fixed_size_list<float32, n>, v: list<float32>}. */
  static String arrowSchema(int n) {
    FlatBufferBuilder b = new FlatBufferBuilder();
    int floatType = FloatingPoint.createFloatingPoint(b, Precision.SINGLE);
    int elemName = b.createString("element");
    int elem = Field.createField(b, elemName, true, Type.FloatingPoint, floatType, 0,
        Field.createChildrenVector(b, new int[0]), 0);
    int fsl = FixedSizeList.createFixedSizeList(b, n);
    int xName = b.createString("x");
    int x = Field.createField(b, xName, true, Type.FixedSizeList, fsl, 0, Field.createChildrenVector(b, new int[] {elem}), 0);
    int floatType2 = FloatingPoint.createFloatingPoint(b, Precision.SINGLE);
    int elemName2 = b.createString("element");
    int elem2 = Field.createField(b, elemName2, true, Type.FloatingPoint, floatType2, 0,
        Field.createChildrenVector(b, new int[0]), 0);
    org.apache.arrow.flatbuf.List.startList(b);
    int list = org.apache.arrow.flatbuf.List.endList(b);
    int vName = b.createString("v");
    int v = Field.createField(b, vName, true, Type.List, list, 0, Field.createChildrenVector(b, new int[] {elem2}), 0);
    int fields = Schema.createFieldsVector(b, new int[] {x, v});
    int schema = Schema.createSchema(b, Endianness.Little, fields, 0, 0);
    int msg = Message.createMessage(b, MetadataVersion.V5, MessageHeader.Schema, schema, 0L, 0);
    b.finish(msg);
    byte[] fb = b.sizedByteArray();
    ByteBuffer framed = ByteBuffer.allocate(8 + fb.length).order(ByteOrder.LITTLE_ENDIAN);
    framed.putInt(-1).putInt(fb.length).put(fb);
    return Base64.getEncoder().encodeToString(framed.array());
  }

  @Test
  void fixedSizeListDeclaredByPyarrowIsAFixedShapeTensor() throws Exception {
    MessageType schema = MessageTypeParser.parseMessageType("""
        message arrow_schema {
          optional group x (LIST) { repeated group list { optional float element; } }
          optional group v (LIST) { repeated group list { optional float element; } }
        }
        """);
    Path f = dir.resolve("pyarrow-like.parquet");
    Config c = new Config(CompressionCodecName.SNAPPY, WriterVersion.PARQUET_1_0, true, false, false);
    // the test filler writes exactly 4 elements into a field named x, 0..3 into others
    ParquetTestFiles.write(f, schema, Map.of("ARROW:schema", arrowSchema(4)), c, 200, 80, 40, 4);
    List<Group> want = ParquetTestFiles.readGroups(f);
    ParquetDataset ds = Parquet.open(f);
    assertEquals(new TensorSpec("x", DType.FLOAT32, Shape.of(4), true), ds.schema().field("x"));
    // pyarrow writes every list element optional: a list without a declared length keeps its null elements
    assertEquals(new TensorSpec("v", DType.FLOAT32, Shape.of(-1), true, 0b1), ds.schema().field("v"));
    List<Batch> batches = ds.batches(64).collectList().block();
    try {
      assertEquals(200, ParquetTestFiles.assertBatchesMatch(batches, want, 0, ParquetTestFiles.plans(ds, f), "arrow"));
    } finally {
      batches.forEach(Batch::close);
    }
  }
}
