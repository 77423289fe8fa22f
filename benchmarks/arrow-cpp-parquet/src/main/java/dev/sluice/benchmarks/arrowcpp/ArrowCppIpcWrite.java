package dev.sluice.benchmarks.arrowcpp;

import java.nio.file.Path;
import org.apache.arrow.dataset.file.DatasetFileWriter;
import org.apache.arrow.dataset.file.FileFormat;
import org.apache.arrow.dataset.file.FileSystemDatasetFactory;
import org.apache.arrow.dataset.jni.NativeMemoryPool;
import org.apache.arrow.dataset.scanner.ScanOptions;
import org.apache.arrow.dataset.scanner.Scanner;
import org.apache.arrow.dataset.source.Dataset;
import org.apache.arrow.dataset.source.DatasetFactory;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * Writes a Parquet file as Arrow IPC files with Arrow C++ (arrow-dataset JNI: C++'s Parquet reader
 * and its IPC writer), so that Sluice's Arrow reader can be checked against files another Arrow
 * implementation wrote: {@code sluice checksum IN.parquet} and {@code sluice checksum OUT_DIR/part-0.arrow}
 * must agree.
 *
 * <pre>java -cp target/classes:target/lib/* dev.sluice.benchmarks.arrowcpp.ArrowCppIpcWrite IN.parquet OUT_DIR [batchRows]</pre>
 */
public final class ArrowCppIpcWrite {
  private ArrowCppIpcWrite() {}

  /**
   * Converts {@code args[0]} (a Parquet file) into {@code args[1]} (a new directory) as
   * {@code part-0.arrow}, record batches of {@code args[2]} rows (default 4,096).
   */
  public static void main(String[] args) throws Exception {
    String in = Path.of(args[0]).toAbsolutePath().toUri().toString();
    String out = Path.of(args[1]).toAbsolutePath().toUri().toString();
    long batchRows = args.length > 2 ? Long.parseLong(args[2]) : 4096;
    // Not closed: after a write, arrow-dataset's native writer leaves a few kilobytes with the
    // allocator (apache/arrow-java#1255), and closing it would throw; the process ends right after.
    BufferAllocator allocator = new RootAllocator();
    try (DatasetFactory factory = new FileSystemDatasetFactory(allocator, NativeMemoryPool.getDefault(),
            FileFormat.PARQUET, in);
        Dataset dataset = factory.finish();
        Scanner scanner = dataset.newScan(new ScanOptions(batchRows));
        ArrowReader reader = scanner.scanBatches()) {
      DatasetFileWriter.write(allocator, reader, FileFormat.ARROW_IPC, out, new String[0], 1, "part-{i}.arrow");
    }
  }
}
