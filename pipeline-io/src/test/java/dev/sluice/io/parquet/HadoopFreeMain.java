package dev.sluice.io.parquet;

import dev.sluice.core.DatasetException;
import dev.sluice.io.Checksums;
import java.nio.file.Path;

/**
 * Run in a JVM without Hadoop on the class path ({@link ParquetWithoutHadoopTest}): prints, per
 * file argument, {@code sha <checksum>}; then, for the URI argument after {@code --uri}, the error
 * opening it gives ({@code error <class> <message>}); for a file after {@code --bad}, the error
 * reading it gives (also {@code error <class> <message>}).
 */
public final class HadoopFreeMain {
  private HadoopFreeMain() {}

  public static void main(String[] args) {
    boolean uris = false;
    boolean bad = false;
    for (String a : args) {
      if (a.equals("--uri")) {
        uris = true;
        continue;
      }
      if (a.equals("--bad")) {
        bad = true;
        continue;
      }
      if (bad) {
        try {
          System.out.println("sha " + Checksums.sha256(Parquet.open(Path.of(a))));
        } catch (RuntimeException e) {
          System.out.println("error " + e.getClass().getSimpleName() + " " + e.getMessage());
        }
        bad = false;
        continue;
      }
      if (!uris) {
        System.out.println("sha " + Checksums.sha256(Parquet.open(Path.of(a))));
        continue;
      }
      try {
        Parquet.open(a, ParquetOptions.defaults());
        System.out.println("opened " + a);
      } catch (DatasetException e) {
        System.out.println("error " + e.getClass().getSimpleName() + " " + e.getMessage());
      }
    }
    try {
      Class.forName("org.apache.hadoop.conf.Configuration");
      System.out.println("hadoop present");
    } catch (ClassNotFoundException e) {
      System.out.println("hadoop absent");
    }
  }
}
