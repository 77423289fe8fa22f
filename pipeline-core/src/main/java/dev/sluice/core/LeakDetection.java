package dev.sluice.core;

import java.lang.ref.Cleaner;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports batches that became unreachable without being closed, and returns their memory to the
 * pool, in the manner of Netty's {@code ResourceLeakDetector}.
 *
 * <p>Every batch is watched (a {@link Cleaner}) unless the level is {@link Level#DISABLED}: when
 * one is collected while still open, and no tensor of it is reachable either, one WARN line goes to
 * the SLF4J logger {@code dev.sluice.core.LeakDetection} naming the batch, and its pooled memory goes
 * back to its pool, so a forgotten batch costs a log line rather than memory. Where the batch was
 * created is part of the report for the batches whose creation was recorded: one in
 * {@value #DEFAULT_SAMPLING_INTERVAL} at {@link Level#SIMPLE}, every one at {@link Level#PARANOID}.
 *
 * <p>The level comes from the system property {@value #LEVEL_PROPERTY} ({@code disabled},
 * {@code simple} (default) or {@code paranoid}) and can be changed with {@link #setLevel}; the
 * sampling interval from {@value #SAMPLING_INTERVAL_PROPERTY}. A level applies to batches created
 * after it is set.
 */
public final class LeakDetection {
  /** System property naming the level: {@code disabled}, {@code simple} or {@code paranoid}. */
  public static final String LEVEL_PROPERTY = "sluice.leakDetection";
  /** System property: at {@link Level#SIMPLE}, one batch in this many records where it was created. */
  public static final String SAMPLING_INTERVAL_PROPERTY = "sluice.leakDetection.samplingInterval";
  /** Default of {@value #SAMPLING_INTERVAL_PROPERTY}. */
  public static final int DEFAULT_SAMPLING_INTERVAL = 128;

  private static final Logger LOG = LoggerFactory.getLogger(LeakDetection.class);
  private static final AtomicLong REPORTED = new AtomicLong();
  private static final int SAMPLING_INTERVAL = samplingInterval(System.getProperty(SAMPLING_INTERVAL_PROPERTY));
  private static volatile Level level = parse(System.getProperty(LEVEL_PROPERTY));

  private LeakDetection() {}

  /** How much the detector does. */
  public enum Level {
    /** Nothing is watched: a batch dropped without {@code close()} keeps its pooled bytes outstanding. */
    DISABLED,
    /** Every leak is reported and its memory returned; one batch in the sampling interval records its creation. */
    SIMPLE,
    /** As {@link #SIMPLE}, and every batch records where it was created (a stack trace per batch: tests, debugging). */
    PARANOID
  }

  /** The current level. */
  public static Level level() {
    return level;
  }

  /** Sets the level for batches created from now on. */
  public static void setLevel(Level newLevel) {
    level = java.util.Objects.requireNonNull(newLevel, "newLevel");
  }

  /** Leaks reported since the JVM started. */
  public static long leaksReported() {
    return REPORTED.get();
  }

  /** Watches {@code memory} (a batch's lifetime), running {@code release} when it is collected; null when disabled. */
  static Cleaner.Cleanable track(BatchMemory memory, BatchRelease release) {
    Level l = level;
    if (l == Level.DISABLED) {
      return null;
    }
    if (l == Level.PARANOID || ThreadLocalRandom.current().nextInt(SAMPLING_INTERVAL) == 0) {
      release.recordCreation(new CreatedAt(memory.name()));
    }
    return Watcher.CLEANER.register(memory, release);
  }

  /** Called by the cleaner for a batch that was collected while open. */
  static void report(BatchRelease leaked) {
    REPORTED.incrementAndGet();
    String what = "LEAK: " + leaked.describe() + " was not closed before it became unreachable; its memory went back "
        + "to the pool. Close every batch (try (batch) { ... }) or consume pipelines with Pipeline.iterate.";
    Throwable where = leaked.createdAt();
    if (where != null) {
      LOG.warn(what, where);
    } else {
      LOG.warn("{} Set -D{}=paranoid to see where leaked batches are created.", what, LEVEL_PROPERTY);
    }
  }

  private static Level parse(String value) {
    if (value == null || value.isBlank()) {
      return Level.SIMPLE;
    }
    try {
      return Level.valueOf(value.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      LOG.warn("-D{}={}: expected disabled, simple or paranoid; using simple", LEVEL_PROPERTY, value);
      return Level.SIMPLE;
    }
  }

  private static int samplingInterval(String value) {
    if (value == null || value.isBlank()) {
      return DEFAULT_SAMPLING_INTERVAL;
    }
    try {
      int n = Integer.parseInt(value.trim());
      if (n > 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    LOG.warn("-D{}={}: expected a positive integer; using {}", SAMPLING_INTERVAL_PROPERTY, value, DEFAULT_SAMPLING_INTERVAL);
    return DEFAULT_SAMPLING_INTERVAL;
  }

  /** The cleaner thread, started with the first watched batch. */
  private static final class Watcher {
    static final Cleaner CLEANER = Cleaner.create(r -> {
      Thread t = new Thread(r, "sluice-leak-detector");
      t.setDaemon(true);
      return t;
    });
  }

  /** Where a batch was created: the stack trace of a leak report. */
  private static final class CreatedAt extends Throwable {
    private static final long serialVersionUID = 1L;

    CreatedAt(String batch) {
      super(batch + " was created here", null, false, true);
    }
  }
}
