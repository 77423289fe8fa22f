package dev.sluice.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Options.ChunkPlacement;
import dev.sluice.core.Options.PrefetchSpin;
import java.time.Duration;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.Resources;

@ResourceLock(Resources.SYSTEM_PROPERTIES)
class OptionsTest {
  @Test
  void tuningDefaultsWithoutProperties() {
    Options o = Options.defaults();
    assertEquals(Duration.ofMillis(1), o.prefetchPark());
    assertEquals(PrefetchSpin.adaptive(), o.prefetchSpin());
    assertEquals(ChunkPlacement.ADAPTIVE, o.mapChunks());
    assertEquals(o, Options.builder().build());
  }

  @Test
  void builderSetsEveryTuningKnob() {
    Options o = Options.builder().prefetchPark(Duration.ZERO).prefetchSpin(PrefetchSpin.fixed(Duration.ofNanos(7_000)))
        .mapChunks(ChunkPlacement.WORKERS).build();
    assertEquals(Duration.ZERO, o.prefetchPark());
    assertEquals(PrefetchSpin.fixed(Duration.ofNanos(7_000)), o.prefetchSpin());
    assertEquals(ChunkPlacement.WORKERS, o.mapChunks());
    assertEquals(o, o.toBuilder().build(), "toBuilder keeps the tuning");
    assertEquals(true, o.deterministic(), "and the other settings keep their defaults");
  }

  @Test
  void theBlockShuffleThresholdDefaultsToHalfThePhysicalMemoryAndIsChecked() {
    long total = ((com.sun.management.OperatingSystemMXBean)
        java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getTotalMemorySize();
    assertEquals(total / 2, Options.defaults().blockShuffleThreshold());
    Options o = Options.builder().blockShuffleThreshold(1234).build();
    assertEquals(1234, o.blockShuffleThreshold());
    assertEquals(1234, o.toBuilder().name("x").build().blockShuffleThreshold());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Options.builder().blockShuffleThreshold(-1));
    assertEquals("blockShuffleThreshold >= 0 required but it was -1", e.getMessage());
  }

  @Test
  void theShuffleBlockSizeDefaultsToTwoMebibytesAndMustBePositive() {
    assertEquals(2L << 20, Options.defaults().shuffleBlockBytes());
    assertEquals(Options.DEFAULT_SHUFFLE_BLOCK_BYTES, Options.defaults().shuffleBlockBytes());
    Options o = Options.builder().shuffleBlockBytes(4096).build();
    assertEquals(4096, o.shuffleBlockBytes());
    assertEquals(4096, o.toBuilder().name("x").build().shuffleBlockBytes(), "toBuilder keeps it");
    for (long bad : new long[] {0, -1, Long.MIN_VALUE}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Options.builder().shuffleBlockBytes(bad));
      assertEquals("shuffleBlockBytes > 0 required but it was " + bad, e.getMessage());
    }
    Options d = Options.defaults();
    Options eleven = new Options(d.deterministic(), d.memory(), d.nullPolicy(), d.metrics(), d.name(),
        d.prefetchPark(), d.prefetchSpin(), d.mapChunks(), 77, 5, 6);
    assertEquals(Options.DEFAULT_SHUFFLE_BLOCK_BYTES, eleven.shuffleBlockBytes(),
        "the constructor without it takes the default");
    assertEquals(77, eleven.blockShuffleThreshold());
    assertEquals(6, eleven.pageCacheBytes());
  }

  @Test
  void theOldSystemPropertiesSetTheDefaults() {
    Options o = withProperties(Options::defaults, "250", "0", "false");
    assertEquals(Duration.ofNanos(250_000), o.prefetchPark());
    assertEquals(PrefetchSpin.fixed(Duration.ZERO), o.prefetchSpin());
    assertEquals(ChunkPlacement.WORKERS, o.mapChunks());
    Options built = withProperties(() -> Options.builder().name("x").build(), "3", "12", "true");
    assertEquals(Duration.ofNanos(3_000), built.prefetchPark());
    assertEquals(PrefetchSpin.fixed(Duration.ofNanos(12_000)), built.prefetchSpin());
    assertEquals(ChunkPlacement.ADAPTIVE, built.mapChunks());
    Options legacy = withProperties(() -> new Options(true, MemoryManager.shared(), Options.NullPolicy.FILL, null, "y"),
        "5", null, null);
    assertEquals(Duration.ofNanos(5_000), legacy.prefetchPark(), "the five-value constructor takes the defaults too");
    assertEquals(Duration.ofMillis(1), Options.defaults().prefetchPark(), "read on each call, not once per JVM");
  }

  @Test
  void aBadPropertyOrSettingIsNamed() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> withProperties(Options::defaults, "-1", null, null));
    assertTrue(e.getMessage().contains(Options.PREFETCH_PARK_PROPERTY) && e.getMessage().contains("-1"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> withProperties(Options::defaults, null, "fast", null));
    assertTrue(e.getMessage().contains(Options.PREFETCH_SPIN_PROPERTY) && e.getMessage().contains("fast"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> Options.builder().prefetchPark(Duration.ofNanos(-1)));
    assertTrue(e.getMessage().startsWith("prefetchPark >= 0 required"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> PrefetchSpin.fixed(Duration.ofNanos(-1)));
    assertTrue(e.getMessage().startsWith("budget >= 0 required"), e.getMessage());
  }

  /** {@code make()} with the three properties set (null: cleared), restored afterwards. */
  private static <T> T withProperties(Supplier<T> make, String parkMicros, String spinMicros, String mapInline) {
    String[] names = {Options.PREFETCH_PARK_PROPERTY, Options.PREFETCH_SPIN_PROPERTY, Options.MAP_INLINE_PROPERTY};
    String[] values = {parkMicros, spinMicros, mapInline};
    String[] old = new String[names.length];
    try {
      for (int i = 0; i < names.length; i++) {
        old[i] = System.getProperty(names[i]);
        if (values[i] == null) {
          System.clearProperty(names[i]);
        } else {
          System.setProperty(names[i], values[i]);
        }
      }
      return make.get();
    } finally {
      for (int i = 0; i < names.length; i++) {
        if (old[i] == null) {
          System.clearProperty(names[i]);
        } else {
          System.setProperty(names[i], old[i]);
        }
      }
    }
  }
}
