package dev.sluice.examples.cli;

import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code PATH} and how it is opened ({@code --format}, {@code --columns}, {@code --conf},
 * {@code --remote-cache}): what the commands that read one dataset take, opened through
 * {@link DatasetRun#open}.
 */
final class DatasetInputOptions {
  @Parameters(index = "0", paramLabel = "PATH", description = "A file or directory, or a Hadoop FileSystem URI (hdfs://…, s3a://…, file:…); - reads an "
      + "Arrow IPC stream from standard input.")
  String path;

  @Mixin
  HadoopConfOptions hadoop = new HadoopConfOptions();

  @Mixin
  RemoteCacheOptions remoteCache = new RemoteCacheOptions();

  @Option(names = "--format", paramLabel = "F", completionCandidates = DatasetRun.FormatNames.class,
      description = "Format (${COMPLETION-CANDIDATES}); default: recognized from the contents.")
  String format;

  @Option(names = "--columns", split = ",", paramLabel = "a,b",
      description = "Read only these fields (default: all); the others are not read.")
  List<String> columns = List.of();

  /** Opens PATH with the fields of {@code --columns}; {@code io} null: the format's default. */
  Dataset<Example> open(String io) {
    return open(columns, io);
  }

  /**
   * Opens PATH with the given fields (empty: all), after handing {@code --conf} to Hadoop;
   * {@code io} null: the format's default.
   */
  Dataset<Example> open(List<String> fields, String io) {
    hadoop.apply();
    return DatasetRun.open(path, format, fields, io, remoteCache.cache());
  }
}
