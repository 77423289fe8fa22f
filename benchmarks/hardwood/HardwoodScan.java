import dev.hardwood.HardwoodContext;
import dev.hardwood.InputFile;
import dev.hardwood.reader.ColumnReader;
import dev.hardwood.reader.ColumnReaders;
import dev.hardwood.reader.ParquetFileReader;
import dev.hardwood.schema.ColumnProjection;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;

/**
 * Reads every column of a Parquet file with Hardwood's column readers and folds each batch's values
 * into a checksum, for comparison with {@code sluice bench} on the same file.
 *
 * <p>Usage: {@code java -cp hardwood-core.jar:... HardwoodScan FILE EPOCHS THREADS}; prints one line
 * per epoch: records/s, CPU seconds per million records and the checksum.
 */
public final class HardwoodScan {
  private HardwoodScan() {}

  public static void main(String[] args) throws Exception {
    Path file = Path.of(args[0]);
    int epochs = Integer.parseInt(args[1]);
    int threads = Integer.parseInt(args[2]);
    var bean = ManagementFactory.getOperatingSystemMXBean();
    var os = (com.sun.management.OperatingSystemMXBean) bean;
    for (int epoch = -1; epoch < epochs; epoch++) {
      long cpu0 = os.getProcessCpuTime();
      long t0 = System.nanoTime();
      long rows = 0;
      long sum = 0;
      try (HardwoodContext context = HardwoodContext.create(threads);
          ParquetFileReader reader = ParquetFileReader.open(InputFile.of(file), context);
          ColumnReaders columns = reader.columnReaders(ColumnProjection.all())) {
        int n = columns.getColumnCount();
        while (columns.nextBatch()) {
          rows += columns.getRecordCount();
          for (int c = 0; c < n; c++) {
            sum = sum * 31 + fold(columns.getColumnReader(c));
          }
        }
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
      System.out.printf(
          "%s epoch %d: %d records %.0f records/s %.3f CPU-s/M checksum %016x%n",
          epoch < 0 ? "warmup" : "measured", epoch, rows, rows / seconds, cpu / rows * 1e6, sum);
    }
  }

  private static long fold(ColumnReader column) {
    long h = column.getValueCount();
    switch (column.getColumnSchema().type()) {
      case FLOAT -> {
        float[] v = column.getFloats();
        for (int i = 0, n = column.getValueCount(); i < n; i++) {
          h = h * 31 + Float.floatToRawIntBits(v[i]);
        }
      }
      case DOUBLE -> {
        double[] v = column.getDoubles();
        for (int i = 0, n = column.getValueCount(); i < n; i++) {
          h = h * 31 + Double.doubleToRawLongBits(v[i]);
        }
      }
      case INT32 -> {
        int[] v = column.getInts();
        for (int i = 0, n = column.getValueCount(); i < n; i++) {
          h = h * 31 + v[i];
        }
      }
      case INT64 -> {
        long[] v = column.getLongs();
        for (int i = 0, n = column.getValueCount(); i < n; i++) {
          h = h * 31 + v[i];
        }
      }
      case BYTE_ARRAY -> {
        byte[] v = column.getBinaryValues();
        int[] offsets = column.getBinaryOffsets();
        h = h * 31 + v.length + offsets.length;
        for (byte b : v) {
          h = h * 31 + b;
        }
      }
      default -> h = h * 31 + column.getValueCount();
    }
    return h;
  }
}
