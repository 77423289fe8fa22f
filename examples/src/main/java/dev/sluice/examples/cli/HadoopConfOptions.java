package dev.sluice.examples.cli;

import dev.sluice.io.Formats;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Option;

/** {@code --conf key=value}: Hadoop settings for the commands that take {@code hdfs://}, {@code s3a://}, ... URIs. */
final class HadoopConfOptions {
  @Option(names = "--conf", paramLabel = "key=value", description = "A Hadoop setting for hdfs://, s3a://, ... URIs "
      + "(repeatable), over core-site.xml and HADOOP_CONF_DIR; values of keys naming a secret, password, token or key "
      + "are never printed.")
  Map<String, String> conf = new LinkedHashMap<>();

  /** Hands the settings given to the Hadoop configuration every remote dataset of this process uses. */
  void apply() {
    if (conf != null && !conf.isEmpty()) {
      Formats.configureHadoop(conf);
    }
  }
}
