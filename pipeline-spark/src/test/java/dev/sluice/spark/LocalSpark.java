package dev.sluice.spark;

import org.apache.spark.sql.SparkSession;

/** The in-process Spark session the tests of this module run on. */
final class LocalSpark {
  private LocalSpark() {}

  /** A local session on two threads named {@code appName}: no UI, two shuffle partitions, bound to loopback. */
  static SparkSession start(String appName) {
    return start("local[2]", appName);
  }

  /** As {@link #start(String)} with the master {@code master} (e.g. {@code local[2,2]}: a failed task is retried once). */
  static SparkSession start(String master, String appName) {
    return SparkSession.builder().master(master).appName(appName)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate();
  }
}
