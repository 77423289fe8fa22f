package dev.sluice.examples.cli;

import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.io.Checksums;
import dev.sluice.io.Verifiable;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code sluice checksum PATH [--columns a,b] [--verify]}: the SHA-256 of the canonical bytes
 * ({@link Checksums}) as 64 lowercase hex digits. Equal checksums mean a conversion lost nothing.
 * {@code --verify} first checks a format's stored checksums over every byte ({@link Verifiable}) and
 * says on stderr what it checked; stdout holds only the checksum.
 */
@Command(name = "checksum", mixinStandardHelpOptions = true,
    description = "Print the SHA-256 of a dataset's canonical bytes (64 lowercase hex digits).")
final class ChecksumCommand implements Callable<Integer> {
  @Mixin
  DatasetInputOptions input = new DatasetInputOptions();

  @Option(names = "--io", paramLabel = "mmap|read", description = "How npy, shards, parquet and arrow files are "
      + "read: mmap (a memory mapping; the default for npy, shards and arrow) or read (positioned reads into batch "
      + "memory, nothing mapped; the default for parquet; suits network filesystems).")
  String io;

  @Option(names = "--verify", description = "First check every byte against the checksums the files store (shards).")
  boolean verify;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    Dataset<Example> ds = input.open(io);
    try {
      if (verify) {
        Dataset<Example> whole = input.columns.isEmpty() ? ds : input.open(List.of(), io); // the stored checksums cover every field
        try {
          if (!(whole instanceof Verifiable v)) {
            throw new UnsupportedOperationException("note: " + input.path + ": the " + DatasetRun.formatName(input.path, input.format) + " format stores no checksums;"
                + " nothing to verify (--verify applies to shards)");
          }
          Verifiable.Verified done = v.verify();
          spec.commandLine().getErr().printf(Locale.ROOT, "verified %d %s (%d blocks, %s) against their %s%n",
              done.files(), done.fileKind(), done.blocks(), mebibytes(done.bytes()), done.checksum());
          spec.commandLine().getErr().flush();
        } finally {
          if (whole != ds) {
            DatasetRun.close(whole);
          }
        }
      }
      String sha = Checksums.sha256(ds);
      spec.commandLine().getOut().println(sha);
      spec.commandLine().getOut().flush();
      return 0;
    } finally {
      DatasetRun.close(ds);
    }
  }

  /** {@code bytes} in MiB with one decimal ({@code "1.2 MiB"}). */
  static String mebibytes(long bytes) {
    return String.format(Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024.0));
  }
}
