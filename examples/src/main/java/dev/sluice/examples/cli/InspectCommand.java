package dev.sluice.examples.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.TensorSpec;
import dev.sluice.io.hdf5.Hdf5Dataset;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code sluice inspect PATH}: JSON on stdout with the format, the fields ({@code name},
 * {@code dtype}, {@code shape}, and {@code nullable} when true), the rows and, for split sources,
 * the number of splits (chunks, shards, row groups); for HDF5 also the datasets read and their
 * attributes. Works for every format in the registry.
 */
@Command(name = "inspect", mixinStandardHelpOptions = true,
    description = "Print a dataset's format, fields, rows and splits as JSON.")
final class InspectCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "PATH", description = "A file or directory, or a Hadoop FileSystem URI (hdfs://…, s3a://…, file:…); - reads an "
      + "Arrow IPC stream from standard input.")
  String path;

  @Mixin
  HadoopConfOptions hadoop = new HadoopConfOptions();

  @Option(names = "--format", paramLabel = "F", completionCandidates = DatasetRun.FormatNames.class,
      description = "Format (${COMPLETION-CANDIDATES}); default: recognized from the contents.")
  String format;

  @Option(names = "--columns", split = ",", paramLabel = "a,b",
      description = "Only these fields (default: all); the others are not read.")
  List<String> columns = List.of();

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    hadoop.apply();
    String formatName = DatasetRun.formatName(path, format);
    Dataset<Example> ds = DatasetRun.open(path, formatName, columns, null);
    try {
      ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
      ObjectNode root = json.createObjectNode();
      root.put("format", formatName);
      root.put("path", path);
      if (ds instanceof HasSchema h) {
        ArrayNode fields = root.putArray("fields");
        for (TensorSpec s : h.schema().fields()) {
          ObjectNode n = fields.addObject();
          n.put("name", s.name());
          n.put("dtype", s.dtype().numpyName());
          ArrayNode shape = n.putArray("shape");
          for (long d : s.shape().dims()) {
            shape.add(d);
          }
          if (s.nullable()) {
            n.put("nullable", true);
          }
          if (s.nullableElements() != 0) { // the list levels whose elements may be null
            ArrayNode levels = n.putArray("nullableElements");
            for (int level = 0; level < s.raggedRank(); level++) {
              if (s.elementsNullable(level)) {
                levels.add(level);
              }
            }
          }
        }
      }
      root.put("rows", rows(ds));
      if (ds instanceof SplitDataset<?> sd) {
        root.put("splits", sd.splits().size());
      }
      if (ds instanceof Hdf5Dataset h) {
        ArrayNode datasets = root.putArray("datasets");
        h.datasetPaths().forEach(datasets::add);
        root.set("attributes", json.valueToTree(h.attributes()));
      }
      spec.commandLine().getOut().println(json.writeValueAsString(root));
      spec.commandLine().getOut().flush();
      return 0;
    } finally {
      DatasetRun.close(ds);
    }
  }

  /** From {@code size()}, else the splits' row counts, else by counting. */
  static long rows(Dataset<Example> ds) {
    long known = DatasetRun.knownRows(ds);
    if (known >= 0) {
      return known;
    }
    Long n = ds.flux().count().block();
    return n == null ? 0 : n;
  }
}
