package dev.sluice.benchmarks.arrowcpp;

import java.nio.file.Path;
import org.apache.arrow.dataset.file.FileFormat;
import org.apache.arrow.dataset.file.FileSystemDatasetFactory;
import org.apache.arrow.dataset.jni.NativeMemoryPool;
import org.apache.arrow.dataset.scanner.ScanOptions;
import org.apache.arrow.dataset.scanner.Scanner;
import org.apache.arrow.dataset.source.Dataset;
import org.apache.arrow.dataset.source.DatasetFactory;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * Reads a Parquet file with Arrow C++ (arrow-dataset JNI) into Arrow record batches, every column,
 * {@code warmups} then {@code rounds} times; prints {@code arrow <round> <rows/s wall> <rows/s of process CPU>}
 * per measured round (the CPU figure includes Arrow's native threads).
 *
 * <pre>java -cp target/classes:target/lib/* dev.sluice.benchmarks.arrowcpp.ArrowParquetRead FILE [warmups] [rounds]</pre>
 */
public final class ArrowParquetRead {
  private ArrowParquetRead() {}

  /** CPU time of the whole JVM, native threads included, ns. */
  static long cpu() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  public static void main(String[] args) throws Exception {
    String uri = Path.of(args[0]).toAbsolutePath().toUri().toString();
    int warmups = args.length > 1 ? Integer.parseInt(args[1]) : 1;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    long check = 0;
    try (BufferAllocator allocator = new RootAllocator()) {
      for (int r = -warmups; r < rounds; r++) {
        long c0 = cpu();
        long t0 = System.nanoTime();
        long rows = 0;
        try (DatasetFactory factory = new FileSystemDatasetFactory(allocator, NativeMemoryPool.getDefault(),
                FileFormat.PARQUET, uri);
            Dataset dataset = factory.finish();
            Scanner scanner = dataset.newScan(new ScanOptions(4096));
            ArrowReader reader = scanner.scanBatches()) {
          while (reader.loadNextBatch()) {
            VectorSchemaRoot root = reader.getVectorSchemaRoot();
            rows += root.getRowCount();
            for (FieldVector v : root.getFieldVectors()) {
              check += v.getValueCount();
            }
          }
        }
        double s = (System.nanoTime() - t0) / 1e9;
        double c = (cpu() - c0) / 1e9;
        if (r >= 0) {
          System.out.printf("arrow %d %.0f %.0f%n", r, rows / s, rows / c);
        }
      }
    }
    System.err.println("checksum " + check);
  }
}
