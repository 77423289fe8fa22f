package dev.sluice.io.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.io.Checksums;
import dev.sluice.io.RemoteCache;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.shards.ShardInfo;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The remote cache shared by real processes of one node: two processes reading the same remote
 * shard set at once download each shard once between them, and a process killed (SIGKILL) in the
 * middle of a download leaves nothing a later process takes for a complete copy.
 */
class RemoteCacheProcessesTest {
  @TempDir
  Path dir;

  static Process child(List<String> args, Path err) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(a -> a.startsWith("--add-") || a.startsWith("--enable-native-access") || a.startsWith("-Xmx"))
        .toList());
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(RemoteCacheChild.class.getName());
    cmd.addAll(args);
    return new ProcessBuilder(cmd).redirectError(err.toFile()).start();
  }

  static BufferedReader stdout(Process p) {
    return new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
  }

  @Test
  void twoProcessesDownloadEachShardOnceBetweenThem() throws Exception {
    Path set = RemoteCacheTest.writeShards(dir.resolve("remote/set"), 6);
    String expected;
    List<ShardInfo> shards;
    try (ShardSet l = Shards.open(set)) {
      expected = Checksums.sha256(l);
      shards = l.shards();
    }
    Path cache = dir.resolve("cache");
    Path log = dir.resolve("reads.log");
    Path go = dir.resolve("go");
    List<String> args = List.of(cache.toString(), CountedFileSystem.uri(set).toString(), log.toString(), go.toString());
    Process a = child(args, dir.resolve("a.err"));
    Process b = child(args, dir.resolve("b.err"));
    try (BufferedReader ao = stdout(a); BufferedReader bo = stdout(b)) {
      assertEquals("ready", ao.readLine(), () -> read(dir.resolve("a.err")));
      assertEquals("ready", bo.readLine(), () -> read(dir.resolve("b.err")));
      Files.writeString(go, "go");
      assertEquals("sha " + expected, ao.readLine(), () -> read(dir.resolve("a.err")));
      assertEquals("sha " + expected, bo.readLine(), () -> read(dir.resolve("b.err")));
      assertTrue(a.waitFor(60, TimeUnit.SECONDS));
      assertTrue(b.waitFor(60, TimeUnit.SECONDS));
    }
    assertEquals(0, a.exitValue(), () -> read(dir.resolve("a.err")));
    assertEquals(0, b.exitValue(), () -> read(dir.resolve("b.err")));
    // one line per remote stream: "<path> <bytes read> <size>"; a download reads the whole file
    // (metadata.json, read by each process, is not cached)
    Map<String, Integer> downloads = new HashMap<>();
    for (String line : Files.readAllLines(log)) {
      String[] f = line.split(" ");
      if (f[0].endsWith(".shard") && Long.parseLong(f[1]) >= Long.parseLong(f[2])) {
        downloads.merge(Path.of(f[0]).getFileName().toString(), 1, Integer::sum);
      }
    }
    Map<String, Integer> once = new HashMap<>();
    shards.forEach(s -> once.put(s.file(), 1));
    assertEquals(once, downloads);
  }

  @Test
  void aProcessKilledMidDownloadLeavesNothingALaterReaderServes() throws Exception {
    Path set = RemoteCacheTest.writeShards(dir.resolve("remote/set"), 2);
    String expected;
    try (ShardSet l = Shards.open(set)) {
      expected = Checksums.sha256(l);
    }
    Path cache = dir.resolve("cache");
    Path go = dir.resolve("go");
    Files.writeString(go, "go");
    Path marker = dir.resolve("blocked");
    Process killed = child(List.of(cache.toString(), CountedFileSystem.uri(set).toString(), dir.resolve("k.log").toString(),
        go.toString(), "20000", marker.toString()), dir.resolve("k.err"));
    try (BufferedReader out = stdout(killed)) {
      assertEquals("ready", out.readLine(), () -> read(dir.resolve("k.err")));
      await().atMost(Duration.ofSeconds(60)).until(() -> Files.exists(marker) || !killed.isAlive());
      assertTrue(killed.isAlive(), () -> read(dir.resolve("k.err")));
      killed.destroyForcibly(); // SIGKILL
      assertTrue(killed.waitFor(30, TimeUnit.SECONDS));
    }
    List<Path> left;
    try (Stream<Path> s = Files.list(cache)) {
      left = s.filter(p -> !p.getFileName().toString().endsWith(".lock")).toList();
    }
    assertThat(left).isNotEmpty().allMatch(p -> p.getFileName().toString().endsWith(".part"));
    // a later reader does not take the .part: it downloads the shard again and reads the right rows
    RemoteFiles.configure(CountedFileSystem.settings());
    try (ShardSet r = Shards.open(CountedFileSystem.uri(set), RemoteCache.at(cache, 1L << 30))) {
      assertEquals(expected, Checksums.sha256(r));
    }
    try (Stream<Path> s = Files.list(cache); ShardSet l = Shards.open(set)) {
      List<Path> now = s.filter(p -> !p.getFileName().toString().endsWith(".lock")).toList();
      assertThat(now).hasSize(2).noneMatch(p -> p.toString().endsWith(".part"));
      for (ShardInfo info : l.shards()) {
        Path copy = now.stream().filter(p -> p.getFileName().toString().endsWith("-" + info.file())).findFirst()
            .orElseThrow();
        assertThat(copy).hasSameBinaryContentAs(set.resolve(info.file()));
      }
    }
  }

  static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      return e.toString();
    }
  }
}
