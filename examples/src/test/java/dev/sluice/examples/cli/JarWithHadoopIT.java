package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code sluice} jar as a user runs it: copied into an empty directory, it reads a dataset from a
 * real HDFS once Hadoop's client jars sit in {@code lib/} beside it (the names its manifest's
 * {@code Class-Path} lists), and without them exits 2 with one line saying where to put them.
 */
class JarWithHadoopIT {
  @TempDir static Path dir;

  static MiniDFSCluster cluster;
  static String root;

  @BeforeAll
  static void startHdfs() throws IOException {
    Configuration conf = new Configuration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, dir.resolve("dfs").toString());
    cluster = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
    cluster.waitActive();
    root = cluster.getURI() + "/data/";
  }

  @AfterAll
  static void stopHdfs() {
    if (cluster != null) {
      cluster.shutdown(true);
    }
  }

  @Test
  void theCopiedJarReadsHdfsWithHadoopInLibBesideIt() throws Exception {
    Path local = dir.resolve("x.npy");
    assertEquals(0, CliRun.of("generate", "--rows", "300", "--dim", "5", local.toString()).exitCode());
    FileSystem hdfs = cluster.getFileSystem();
    hdfs.copyFromLocalFile(new org.apache.hadoop.fs.Path(local.toUri()), new org.apache.hadoop.fs.Path(root + "x.npy"));
    String expected = CliRun.of("checksum", local.toString()).out();
    assertThat(expected).isNotBlank();

    Path app = Files.createDirectories(dir.resolve("app"));
    Path jar = Files.copy(Paths.get("target", "sluice.jar"), app.resolve("sluice.jar"));
    Result without = run(jar, "checksum", root + "x.npy");
    assertEquals(2, without.exit, without.err);
    assertThat(without.err.lines()).singleElement().asString().startsWith("sluice: ")
        .contains("lib/hadoop-client-api.jar").contains("lib/hadoop-client-runtime.jar");

    Path lib = Files.createDirectories(app.resolve("lib"));
    Files.copy(onClassPath("hadoop-client-api-"), lib.resolve("hadoop-client-api.jar"));
    Files.copy(onClassPath("hadoop-client-runtime-"), lib.resolve("hadoop-client-runtime.jar"));
    Result with = run(jar, "checksum", root + "x.npy");
    assertEquals(0, with.exit, with.err);
    assertThat(with.err).as("stderr of a successful read").isEmpty();
    assertEquals(expected, with.out);
  }

  /** The jar of the test class path whose file name starts with {@code prefix}. */
  static Path onClassPath(String prefix) {
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path p = Paths.get(entry);
      if (p.getFileName().toString().startsWith(prefix) && entry.endsWith(".jar")) {
        return p;
      }
    }
    throw new AssertionError("no " + prefix + "*.jar on the test class path");
  }

  record Result(int exit, String out, String err) {}

  /** Runs {@code java -jar jar args} from the file system root, as a user anywhere would. */
  static Result run(Path jar, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx512m", "-jar", jar.toString()));
    cmd.addAll(List.of(args));
    Path out = dir.resolve("out.txt");
    Path err = dir.resolve("err.txt");
    Process p = new ProcessBuilder(cmd).directory(new File("/")).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("sluice " + String.join(" ", args) + " did not finish in 120 s");
    }
    return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
  }
}
