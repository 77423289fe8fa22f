package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.testing.NoLeaks;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.apache.commons.compress.archivers.zip.ZipEncodingHelper;
import org.apache.commons.compress.compressors.gzip.GzipCompressorOutputStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** sluice read --cache, sluice cache ls|info|rm and sluice stage. */
@ExtendWith(NoLeaks.class)
class CacheCommandsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private Path parquet;
  private Path npy;
  private Path root;

  @BeforeEach
  void data() {
    parquet = dir.resolve("d.parquet");
    npy = dir.resolve("d");
    root = dir.resolve("shm");
    assertThat(CliRun.of("generate", parquet.toString(), "--rows", "3000", "--dim", "4", "--format", "parquet",
        "--seed", "7", "--row-group-size", "20000").exitCode()).isZero();
    assertThat(CliRun.of("generate", npy.toString(), "--rows", "3000", "--dim", "4", "--seed", "7").exitCode()).isZero();
  }

  private static CliRun ok(String... args) {
    CliRun r = CliRun.of(args);
    assertThat(r.exitCode()).as("%s: %s", String.join(" ", args), r.err()).isZero();
    assertThat(r.err()).as(String.join(" ", args)).isEmpty();
    return r;
  }

  private static void failsWithOneLine(CliRun r, String fragment) {
    assertThat(r.exitCode()).as("%s: %s", fragment, r.err()).isEqualTo(2);
    assertThat(r.err().strip().split("\n")).hasSize(1);
    assertThat(r.err()).startsWith("sluice: ").contains(fragment);
  }

  private static JsonNode json(CliRun r) throws Exception {
    String[] lines = r.out().strip().split("\n");
    return JSON.readTree(lines[lines.length - 1]);
  }

  @Test
  void printIndicesAreTheSameWithAndWithoutTheCacheOnTheFillingPassAndAfter() {
    for (String[] read : new String[][] {
        {"read", parquet.toString(), "--shuffle", "--batch", "64", "--epochs", "2", "--rank", "1", "--world", "2"},
        {"read", npy.toString(), "--shuffle", "--batch", "50", "--epochs", "2", "--rank", "0", "--world", "3"},
        {"read", parquet.toString(), "--epochs", "1"}}) {
      String plain = ok(concat(read, "--print-indices")).out();
      assertThat(plain).isNotEmpty();
      for (int pass = 0; pass < 2; pass++) {
        assertThat(ok(concat(read, "--print-indices", "--cache", root.toString())).out()).as("pass %d of %s", pass,
            read[1]).isEqualTo(plain);
      }
    }
  }

  @Test
  void jsonCountsHitsAndMissesAndAPassAfterTheFirstReadsOnlyTheCache() throws Exception {
    JsonNode first = json(ok("read", parquet.toString(), "--batch", "100", "--cache", root.toString(), "--json"));
    assertThat(first.get("cacheMisses").asLong()).isEqualTo(3000);
    assertThat(first.get("cacheHits").asLong()).isZero();
    JsonNode second = json(ok("read", parquet.toString(), "--batch", "100", "--cache", root.toString(), "--json",
        "--epochs", "2"));
    assertThat(second.get("cacheHits").asLong()).isEqualTo(6000);
    assertThat(second.get("cacheMisses").asLong()).isZero();
    assertThat(second.get("examples").asLong()).isEqualTo(6000);
    CliRun text = ok("read", parquet.toString(), "--cache", root.toString());
    assertThat(text.out()).contains("cache: 3000 hits, 0 misses");
    failsWithOneLine(CliRun.of("read", parquet.toString(), "--cache-max-bytes", "1m"), "--cache-max-bytes needs --cache");
  }

  @Test
  void anArrowFileIsCachedUnderTheNameGivenWithCacheName() throws Exception {
    Path arrow = dir.resolve("d.arrow");
    assertThat(CliRun.of("generate", arrow.toString(), "--rows", "3000", "--dim", "4", "--format", "arrow").exitCode())
        .isZero();
    failsWithOneLine(CliRun.of("read", arrow.toString(), "--cache", root.toString()), "--cache-name NAME");
    failsWithOneLine(CliRun.of("read", arrow.toString(), "--cache-name", "a-v1"), "--cache-name needs --cache");
    JsonNode first = json(ok("read", arrow.toString(), "--cache", root.toString(), "--cache-name", "a-v1", "--json"));
    assertThat(first.get("cacheMisses").asLong()).isEqualTo(3000);
    JsonNode second = json(ok("read", arrow.toString(), "--cache", root.toString(), "--cache-name", "a-v1", "--json"));
    assertThat(second.get("cacheHits").asLong()).isEqualTo(3000);
    assertThat(second.get("cacheMisses").asLong()).isZero();
    JsonNode renamed = json(ok("read", arrow.toString(), "--cache", root.toString(), "--cache-name", "a-v2", "--json"));
    assertThat(renamed.get("cacheMisses").asLong()).as("another name is another cache").isEqualTo(3000);
    assertThat(ok("read", arrow.toString(), "--print-indices", "--cache", root.toString(), "--cache-name", "a-v1").out())
        .isEqualTo(ok("read", arrow.toString(), "--print-indices").out());
  }

  @Test
  void aTouchedFileOrAnotherProjectionIsAnotherCache() throws Exception {
    ok("read", npy.toString(), "--cache", root.toString());
    assertThat(json(ok("read", npy.toString(), "--cache", root.toString(), "--json")).get("cacheMisses").asLong()).isZero();
    Path x = npy.resolve("x.npy");
    Files.setLastModifiedTime(x, FileTime.fromMillis(Files.getLastModifiedTime(x).toMillis() + 10_000));
    assertThat(json(ok("read", npy.toString(), "--cache", root.toString(), "--json")).get("cacheMisses").asLong())
        .as("a touched file is another cache").isEqualTo(3000);
    ok("read", parquet.toString(), "--cache", root.toString());
    JsonNode projected = json(ok("read", parquet.toString(), "--columns", "x", "--cache", root.toString(), "--json"));
    assertThat(projected.get("cacheMisses").asLong()).as("another projection is another cache").isEqualTo(3000);
    assertThat(projected.get("bytes").asLong()).isEqualTo(3000 * 16);
    assertThat(ok("cache", "ls", root.toString()).out().lines().filter(l -> l.startsWith("cache")).count()).isEqualTo(4);
  }

  @Test
  void cacheLsInfoAndRm() throws Exception {
    assertThat(ok("cache", "ls", root.toString()).out()).startsWith("no caches or staged data under");
    ok("read", parquet.toString(), "--cache", root.toString());
    String ls = ok("cache", "ls", root.toString()).out();
    assertThat(ls).startsWith("cache ").contains("3000 rows").contains(parquet.toString());
    Path cache;
    try (Stream<Path> s = Files.list(root)) {
      cache = s.filter(p -> p.getFileName().toString().startsWith("cache-")).findFirst().orElseThrow();
    }
    String info = ok("cache", "info", cache.toString()).out();
    assertThat(info).contains("published").contains("in use    no").contains("file " + parquet);
    failsWithOneLine(CliRun.of("cache", "info", npy.toString()), "not a cache directory");
    failsWithOneLine(CliRun.of("cache", "rm", npy.toString()), "not a cache or a staged dataset");
    assertThat(Files.exists(npy)).isTrue();
    ok("cache", "rm", cache.toString());
    assertThat(Files.exists(cache)).isFalse();
  }

  private Path onlyCache() throws Exception {
    try (Stream<Path> s = Files.list(root)) {
      return s.filter(p -> p.getFileName().toString().startsWith("cache-")).findFirst().orElseThrow();
    }
  }

  private static List<Path> files(Path d) throws Exception {
    try (Stream<Path> s = Files.list(d)) {
      return s.filter(Files::isRegularFile).sorted().toList();
    }
  }

  @Test
  void cacheFilesFoundOpenToOthersAreMadePrivateAgain() throws Exception {
    String plain = ok("read", npy.toString(), "--print-indices", "--cache", root.toString()).out();
    Path cache = onlyCache();
    List<Path> files = files(cache);
    assertThat(files.stream().map(p -> p.getFileName().toString())).contains("cache.json")
        .anyMatch(n -> n.endsWith(".shard"));
    int i = 0;
    for (Path f : files) {
      Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(i++ % 2 == 0 ? "rw-rw-rw-" : "rw-r--r--"));
    }
    // another process (this one keeps the cache it filled open): it opens the index and every segment
    Path out = dir.resolve("second.txt");
    Process second = KillAndResumeTest.sluice(List.of("read", npy.toString(), "--print-indices", "--cache",
        root.toString())).redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    assertThat(second.waitFor(2, TimeUnit.MINUTES)).isTrue();
    assertThat(second.exitValue()).isZero();
    assertThat(Files.readString(out)).isEqualTo(plain);
    for (Path f : files) {
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(f))).as(f.toString()).isEqualTo("rw-------");
    }
  }

  @Test
  void aSealedCacheIsReadByAnotherProcessWithoutLoadingChronicleMap() throws Exception {
    String plain = ok("read", npy.toString(), "--print-indices").out();
    assertThat(ok("read", npy.toString(), "--print-indices", "--cache", root.toString()).out()).isEqualTo(plain);
    assertThat(onlyCache().resolve("sealed.txt")).exists();
    Path out = dir.resolve("sealed-read.txt");
    Path classes = dir.resolve("classes.log");
    ProcessBuilder pb = KillAndResumeTest.sluice(List.of("read", npy.toString(), "--print-indices", "--cache",
        root.toString()));
    pb.command().add(1, "-Xlog:class+load:file=" + classes);
    Process second = pb.redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    assertThat(second.waitFor(2, TimeUnit.MINUTES)).isTrue();
    assertThat(second.exitValue()).isZero();
    assertThat(Files.readString(out)).isEqualTo(plain);
    List<String> loaded = Files.readAllLines(classes);
    assertThat(loaded).anyMatch(l -> l.contains("dev.sluice.operators.internal.cache.SealedManifest"));
    assertThat(loaded).noneMatch(l -> l.contains("net.openhft"));
  }

  @Test
  void rmAllRemovesWhatLivesUnderTheDirectoryItIsGivenAndRefusesADirectoryThatIsNoCacheRoot() throws Exception {
    ok("read", npy.toString(), "--cache", root.toString());
    Path cache = onlyCache();
    failsWithOneLine(CliRun.of("cache", "rm", "--all", cache.toString()), "is a cache or staged dataset itself");
    failsWithOneLine(CliRun.of("cache", "rm", "--all", dir.resolve("none").toString()), "no such directory");
    failsWithOneLine(CliRun.of("cache", "rm", "--all", root.toString(), npy.toString()), "--all takes one DIR");
    assertThat(Files.exists(cache)).isTrue();
    assertThat(ok("cache", "rm", "--all", root.toString()).out()).contains("removed " + cache);
    assertThat(Files.exists(cache)).isFalse();
    assertThat(ok("cache", "rm", "--all", root.toString()).out()).startsWith("no caches or staged data under " + root);
  }

  @Test
  void aDamagedCacheDescriptionIsNamedWithItsCache() throws Exception {
    ok("read", npy.toString(), "--cache", root.toString());
    Path cache = onlyCache();
    Path meta = cache.resolve("cache.json");
    String json = Files.readString(meta);
    Files.writeString(meta, json.substring(0, json.length() / 2));
    failsWithOneLine(CliRun.of("cache", "info", cache.toString()), meta.toString());
    assertThat(CliRun.of("cache", "info", cache.toString()).err()).contains("the cache " + cache);
    assertThat(ok("cache", "ls", root.toString()).out()).contains(cache.toString()).contains("cache.json is damaged");
    Files.writeString(meta, "{\"key\": \"x\"}");
    failsWithOneLine(CliRun.of("cache", "info", cache.toString()), meta.toString());
    assertThat(CliRun.of("cache", "info", cache.toString()).err()).contains("no \"blocks\"");
  }

  @Test
  void stagingUnpacksIntoAPrivateDirectoryAndPrintsItsPath() throws Exception {
    Path archive = dir.resolve("set.tar.gz");
    try (TarArchiveOutputStream tar = new TarArchiveOutputStream(new GzipCompressorOutputStream(Files.newOutputStream(archive)))) {
      directory(tar, "set/");
      file(tar, "set/a.bin", "alpha");
      directory(tar, "set/sub/");
      file(tar, "set/sub/b.bin", "beta");
      link(tar, "set/latest", "sub/b.bin", TarConstants.LF_SYMLINK);
      link(tar, "set/copy.bin", "set/a.bin", TarConstants.LF_LINK);
    }
    Path to = dir.resolve("staged");
    String path = ok("stage", archive.toString(), "--to", to.toString()).out().strip();
    assertThat(Path.of(path)).as("the archive's one top-level directory").isEqualTo(to.toAbsolutePath().resolve("set"));
    assertThat(Files.readString(to.resolve("set/sub/b.bin"))).isEqualTo("beta");
    assertThat(Files.readString(to.resolve("set/latest"))).isEqualTo("beta");
    assertThat(Files.readString(to.resolve("set/copy.bin"))).isEqualTo("alpha");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(to))).isEqualTo("rwx------");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(to.resolve("set/a.bin")))).isEqualTo("rw-------");
    assertThat(ok("stage", archive.toString(), "--to", to.toString()).out().strip()).as("staged again").isEqualTo(path);
    Path copied = dir.resolve("copied");
    assertThat(ok("stage", npy.toString(), "--to", copied.toString()).out().strip()).isEqualTo(copied.toAbsolutePath().toString());
    assertThat(ok("checksum", copied.toString()).out()).isEqualTo(ok("checksum", npy.toString()).out());
    failsWithOneLine(CliRun.of("stage", npy.toString(), "--to", to.toString()), "already exists");
  }

  @Test
  void anArchiveOfOneDatasetDirectoryPrintsThatDirectoryAndAnArchiveOfItsFilesTheTarget() throws Exception {
    Path nested = dir.resolve("npy.tar.gz"); // tar czf npy.tar.gz npy
    Path flat = dir.resolve("flat.tar"); // tar cf flat.tar -C npy .
    try (TarArchiveOutputStream a = new TarArchiveOutputStream(new GzipCompressorOutputStream(Files.newOutputStream(nested)));
        TarArchiveOutputStream b = new TarArchiveOutputStream(Files.newOutputStream(flat));
        var files = Files.list(npy)) {
      directory(a, "npy/");
      for (Path f : files.sorted().toList()) {
        for (var tar : List.of(a, b)) {
          TarArchiveEntry e = new TarArchiveEntry((tar == a ? "npy/" : "") + f.getFileName());
          e.setSize(Files.size(f));
          tar.putArchiveEntry(e);
          tar.write(Files.readAllBytes(f));
          tar.closeArchiveEntry();
        }
      }
    }
    String sum = ok("checksum", npy.toString()).out();
    Path to = dir.resolve("staged-nested");
    String path = ok("stage", nested.toString(), "--to", to.toString()).out().strip();
    assertThat(Path.of(path)).isEqualTo(to.toAbsolutePath().resolve("npy"));
    assertThat(ok("inspect", path).exitCode()).isZero();
    assertThat(ok("checksum", path).out()).isEqualTo(sum);
    assertThat(ok("stage", nested.toString(), "--to", to.toString()).out().strip()).as("staged again").isEqualTo(path);

    Path flatTo = dir.resolve("staged-flat");
    String flatPath = ok("stage", flat.toString(), "--to", flatTo.toString()).out().strip();
    assertThat(Path.of(flatPath)).isEqualTo(flatTo.toAbsolutePath());
    assertThat(ok("checksum", flatPath).out()).isEqualTo(sum);
  }

  @Test
  void anUntrustedArchiveIsRefusedAndNothingIsWrittenOutsideTheTarget() throws Exception {
    Path outside = dir.resolve("outside");
    String[][] cases = {
        {"absolute", outside.toString(), "absolute path"},
        {"dotdot", "set/../../outside", "'..' component"},
        {"symlink-absolute", "set/evil", "points outside"},
        {"symlink-up", "set/evil", "points outside"},
        {"hardlink-up", "set/evil", "'..' component"},
        {"through-link", "set/d/x", "runs through the link"},
        {"char-device", "set/tty", "character device"},
        {"fifo", "set/pipe", "FIFO"}};
    for (String[] c : cases) {
      Path archive = dir.resolve(c[0] + ".tar");
      try (TarArchiveOutputStream tar = new TarArchiveOutputStream(Files.newOutputStream(archive))) {
        tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
        file(tar, "set/fine.bin", "fine");
        switch (c[0]) {
          case "symlink-absolute" -> link(tar, c[1], outside.toString(), TarConstants.LF_SYMLINK);
          case "symlink-up" -> link(tar, c[1], "../../outside", TarConstants.LF_SYMLINK);
          case "hardlink-up" -> link(tar, c[1], "../outside", TarConstants.LF_LINK);
          case "through-link" -> {
            link(tar, "set/d", "..", TarConstants.LF_SYMLINK);
            file(tar, c[1], "x");
          }
          case "char-device" -> special(tar, c[1], TarConstants.LF_CHR);
          case "fifo" -> special(tar, c[1], TarConstants.LF_FIFO);
          default -> file(tar, c[1], "escaped");
        }
      }
      Path to = dir.resolve("t-" + c[0]);
      failsWithOneLine(CliRun.of("stage", archive.toString(), "--to", to.toString()), c[2]);
      assertThat(Files.exists(to)).as(c[0]).isFalse();
      assertThat(Files.exists(outside)).as(c[0]).isFalse();
      try (Stream<Path> s = Files.list(dir)) {
        assertThat(s.filter(p -> p.getFileName().toString().contains(".staging-")).count()).as(c[0]).isZero();
      }
    }
  }

  @Test
  void anArchiveLargerThanTheFreeSpaceIsRefusedWithTheFigures() throws Exception {
    Path archive = dir.resolve("huge.tar");
    TarArchiveEntry e = new TarArchiveEntry("set/huge.bin");
    e.setSize(1L << 50); // a header only: the space check comes before the data would be read
    byte[] header = new byte[512];
    e.writeEntryHeader(header, ZipEncodingHelper.getZipEncoding(StandardCharsets.UTF_8), true);
    try (OutputStream out = Files.newOutputStream(archive)) {
      out.write(header);
      out.write(new byte[1024]);
    }
    CliRun r = CliRun.of("stage", archive.toString(), "--to", dir.resolve("t").toString());
    failsWithOneLine(r, "free, but");
    assertThat(r.err()).contains("needs at least 1.0 PiB");
  }

  private static void directory(TarArchiveOutputStream tar, String name) throws Exception {
    tar.putArchiveEntry(new TarArchiveEntry(name));
    tar.closeArchiveEntry();
  }

  private static void file(TarArchiveOutputStream tar, String name, String content) throws Exception {
    byte[] b = content.getBytes(StandardCharsets.UTF_8);
    TarArchiveEntry e = new TarArchiveEntry(name, true);
    e.setSize(b.length);
    tar.putArchiveEntry(e);
    tar.write(b);
    tar.closeArchiveEntry();
  }

  private static void link(TarArchiveOutputStream tar, String name, String target, byte type) throws Exception {
    TarArchiveEntry e = new TarArchiveEntry(name, type, true);
    e.setLinkName(target);
    tar.putArchiveEntry(e);
    tar.closeArchiveEntry();
  }

  private static void special(TarArchiveOutputStream tar, String name, byte type) throws Exception {
    tar.putArchiveEntry(new TarArchiveEntry(name, type, true));
    tar.closeArchiveEntry();
  }

  private static String[] concat(String[] a, String... b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
