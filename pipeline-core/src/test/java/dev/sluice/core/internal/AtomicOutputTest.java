package dev.sluice.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.testing.ChildJvm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AtomicOutputTest {
  @TempDir Path dir;

  private List<String> names() throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void aFileIsInvisibleUntilCommittedAndReplacesTheOldOne() throws Exception {
    Path target = dir.resolve("out.bin");
    Files.writeString(target, "old");
    try (AtomicOutput out = AtomicOutput.file(target)) {
      Files.writeString(out.temp(), "new");
      assertEquals(out.target().getParent(), out.temp().getParent());
      assertTrue(AtomicOutput.isTemporary(out.temp().getFileName().toString()), out.temp().toString());
      assertThat(out.temp().getFileName().toString()).startsWith(".out.bin.tmp-" + ProcessHandle.current().pid() + "-");
      assertEquals("old", Files.readString(target));
      out.commit();
    }
    assertEquals("new", Files.readString(target));
    assertEquals(List.of("out.bin"), names());
  }

  @Test
  void closingBeforeTheCommitDeletesTheTemporary() throws Exception {
    try (AtomicOutput out = AtomicOutput.file(dir.resolve("f"))) {
      Files.writeString(out.temp(), "partial");
    }
    try (AtomicOutput out = AtomicOutput.directory(dir.resolve("d"))) {
      Files.createDirectories(out.temp().resolve("sub"));
      Files.writeString(out.temp().resolve("sub").resolve("x"), "partial");
    }
    assertEquals(List.of(), names());
  }

  @Test
  void commitNewRefusesAnExistingTargetAndLeavesItAsItWas() throws Exception {
    Path file = dir.resolve("f");
    Files.writeString(file, "first");
    try (AtomicOutput out = AtomicOutput.file(file)) {
      Files.writeString(out.temp(), "second");
      assertThatThrownBy(out::commitNew).isInstanceOf(FileAlreadyExistsException.class).hasMessageContaining(file.toString());
    }
    assertEquals("first", Files.readString(file));
    Path d = dir.resolve("d");
    Files.createDirectories(d);
    Files.writeString(d.resolve("kept"), "1");
    try (AtomicOutput out = AtomicOutput.directory(d)) {
      Files.writeString(out.temp().resolve("new"), "2");
      assertThatThrownBy(out::commitNew).isInstanceOf(FileAlreadyExistsException.class);
    }
    try (Stream<Path> s = Files.list(d)) {
      assertEquals(List.of("kept"), s.map(p -> p.getFileName().toString()).toList());
    }
    assertEquals(List.of("d", "f"), names());
  }

  @Test
  void aDirectoryTakesThePlaceOfAnEmptyOneOrReplacesAFullOne() throws Exception {
    Path d = dir.resolve("d");
    Files.createDirectories(d);
    try (AtomicOutput out = AtomicOutput.directory(d)) {
      Files.writeString(out.temp().resolve("a"), "1");
      out.commitNew();
    }
    try (AtomicOutput out = AtomicOutput.directory(d)) {
      Files.writeString(out.temp().resolve("b"), "2");
      out.commit();
    }
    try (Stream<Path> s = Files.list(d)) {
      assertEquals(List.of("b"), s.map(p -> p.getFileName().toString()).toList());
    }
    assertEquals(List.of("d"), names(), "the old directory set aside is deleted");
  }

  @Test
  void ofConcurrentWritersOfOneTargetExactlyOneWins() throws Exception {
    for (String kind : List.of("file", "dir")) {
      Path target = dir.resolve("race-" + kind);
      int writers = 8;
      ExecutorService pool = Executors.newFixedThreadPool(writers);
      CountDownLatch ready = new CountDownLatch(writers);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Boolean>> results = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        String content = "writer " + w;
        results.add(pool.submit(() -> {
          try (AtomicOutput out = kind.equals("file") ? AtomicOutput.file(target) : AtomicOutput.directory(target)) {
            Files.writeString(kind.equals("file") ? out.temp() : out.temp().resolve("data"), content);
            ready.countDown();
            go.await();
            try {
              out.commitNew();
              return true;
            } catch (FileAlreadyExistsException lost) {
              return false;
            }
          }
        }));
      }
      ready.await();
      go.countDown();
      int won = 0;
      for (Future<Boolean> f : results) {
        won += f.get(1, TimeUnit.MINUTES) ? 1 : 0;
      }
      pool.shutdown();
      assertEquals(1, won, kind);
      String content = Files.readString(kind.equals("file") ? target : target.resolve("data"), StandardCharsets.UTF_8);
      assertThat(content).startsWith("writer ");
    }
    assertEquals(List.of("race-dir", "race-file"), names(), "the losers' temporaries are deleted");
  }

  @Test
  void theNextOutputRemovesWhatAKilledWriterLeftButNotALiveOnesTemporary() throws Exception {
    for (String kind : List.of("file", "dir")) {
      Path target = dir.resolve("t-" + kind);
      Path left;
      try (ChildJvm child = ChildJvm.start(HoldsTemporary.class, target.toString(), kind)) {
        String line = child.nextLine(60);
        assertTrue(line != null, child.stderr());
        left = Path.of(line);
        assertTrue(Files.exists(left));
        try (AtomicOutput live = AtomicOutput.file(target)) {
          assertTrue(Files.exists(left), "a live writer's temporary is left alone");
        }
        child.kill();
      }
      assertTrue(Files.exists(left), "a kill leaves the temporary");
      assertFalse(Files.exists(target));
      try (AtomicOutput next = AtomicOutput.file(target)) {
        assertFalse(Files.exists(left), "the next output removes a dead writer's temporary");
      }
    }
    assertEquals(List.of(), names());
  }

  @Test
  void theReasonOfAFailureThatCarriesOnlyFileNamesIsTheOperatingSystemsWords() {
    assertEquals("Permission denied", AtomicOutput.reason(new java.nio.file.AccessDeniedException("/ro/.out.tmp-1-2")));
    assertEquals("Permission denied",
        AtomicOutput.reason(new java.nio.file.AccessDeniedException("/ro/.out.tmp-1-2", null, "Permission denied")));
    assertEquals("No such file or directory", AtomicOutput.reason(new java.nio.file.NoSuchFileException("/gone/x")));
    assertEquals("No space left on device",
        AtomicOutput.reason(new java.nio.file.FileSystemException("/full/x", null, "No space left on device")));
    assertEquals("disk on fire", AtomicOutput.reason(new IOException("disk on fire")));
    assertEquals("IOException", AtomicOutput.reason(new IOException()));
  }
}
