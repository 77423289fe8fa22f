package dev.sluice.operators.internal;

import dev.sluice.core.Options;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.operators.RandomAccessShuffle;
import dev.sluice.operators.SplitShuffle;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How a plan shuffles a random-access source: the global permutation of the index path, or the
 * block shuffle of its block view ({@link RandomAccessBlocks}), and why, for {@code explain}. The
 * choice is the shuffle stage's {@link RandomAccessShuffle}; {@code AUTO} picks blocks when the
 * source's data bytes exceed {@link Options#blockShuffleThreshold()}. A function of the source's
 * size and schema, the stages and the options only, so every rank and every resumed pass chooses
 * alike.
 *
 * @param stage the shuffle stage the choice is for (the first one of the plan)
 * @param blocks whether the plan block-shuffles the source
 * @param blockRows the rows of a run of the block view, the alignment of its blocks
 *     ({@link RandomAccessBlocks#blockRows()} for {@link Options#shuffleBlockBytes()}); 0 when the
 *     choice is the global permutation
 * @param why what {@code explain} says of the shuffle
 */
record ShuffleChoice(ShuffleStage stage, boolean blocks, long blockRows, String why) {

  private static ShuffleChoice global(ShuffleStage stage, String why) {
    return new ShuffleChoice(stage, false, 0, why);
  }

  private static ShuffleChoice blocks(ShuffleStage stage, RandomAccessDataset<?> source, Options options,
      String why) {
    long rows = RandomAccessBlocks.of(source, null, options.shuffleBlockBytes()).blockRows();
    return new ShuffleChoice(stage, true, rows, why + blockWords(source, rows, options.shuffleBlockBytes()));
  }

  /**
   * The choice for {@code ordered} (normalized, without {@code repeat}) over {@code source}, or null
   * when no shuffle leads the stages.
   *
   * @throws UnsupportedOperationException when a block shuffle is asked for but a take or skip
   *     comes before it
   */
  static ShuffleChoice of(RandomAccessDataset<?> source, List<Stage> ordered, Options options) {
    int indexStages = IndexPlan.planned(ordered);
    ShuffleStage stage = null;
    int at = -1;
    for (int i = 0; i < indexStages && i < ordered.size(); i++) {
      if (ordered.get(i).kind() == Stage.Kind.SHUFFLE) {
        stage = (ShuffleStage) ordered.get(i);
        at = i;
        break;
      }
    }
    if (stage == null) {
      return null;
    }
    boolean leads = at < SplitStages.prefix(ordered).next();
    String global = "global permutation per (seed, epoch)";
    switch (stage.random()) {
      case GLOBAL -> {
        return global(stage, global + ", as asked");
      }
      case BLOCKS -> {
        if (!leads) {
          throw new UnsupportedOperationException(stage.describe() + " on a random-access source must come before "
              + "take and skip (it orders the whole dataset's blocks), but the stages are " + describe(ordered));
        }
        return blocks(stage, source, options, "block shuffle, as asked: ");
      }
      case AUTO -> {
        long bytes = RandomAccessBlocks.dataBytes(source);
        long threshold = options.blockShuffleThreshold();
        if (bytes < 0) {
          return global(stage, global + ": the source declares no schema, so its size is unknown");
        }
        if (bytes <= threshold) {
          return global(stage, global + ": dataset " + bytes(bytes) + " <= threshold "
              + bytes(threshold));
        }
        if (!leads) {
          return global(stage, global + ": dataset " + bytes(bytes) + " > threshold "
              + bytes(threshold) + ", but a block shuffle needs the shuffle before take and skip");
        }
        return blocks(stage, source, options, "block shuffle: dataset " + bytes(bytes) + " > threshold "
            + bytes(threshold) + "; ");
      }
      default -> throw new IllegalStateException(stage.describe());
    }
  }

  /**
   * What the block shuffle does with {@code source}'s rows, cut into runs of {@code rows} rows for
   * {@code blockBytes}.
   */
  private static String blockWords(RandomAccessDataset<?> source, long rows, long blockBytes) {
    long bytes = RandomAccessBlocks.dataBytes(source);
    String size = bytes < 0 ? "" : " (" + bytes(Saturated.multiply(rows, bytes / Math.max(1, source.size()))) + ")";
    return "blocks of at least " + rows + " rows" + size + " in an order per (seed, epoch), each read whole; "
        + "block size " + bytes(blockBytes);
  }

  /** {@code ordered} with the chosen shuffle ordering the block view's blocks ({@link SplitShuffle#BLOCKS}). */
  List<Stage> asBlocks(List<Stage> ordered) {
    List<Stage> out = new ArrayList<>(ordered);
    int i = out.indexOf(stage);
    out.set(i, new ShuffleStage(stage.seed(), SplitShuffle.BLOCKS, RandomAccessShuffle.BLOCKS));
    return out;
  }

  /**
   * The stage as a checkpoint records it: what was chosen, so that a state taken under one choice
   * is refused by a pipeline that makes the other; the global choice records the plain stage, the
   * block shuffle the rows of its runs too, on which its block sequence depends (so a state taken
   * with another {@link Options#shuffleBlockBytes()} resumes only when the runs hold the same rows).
   */
  String shapeKey() {
    String key = new ShuffleStage(stage.seed(), stage.splits(), blocks ? RandomAccessShuffle.BLOCKS
        : RandomAccessShuffle.AUTO).shapeKey();
    return blocks ? key + " with shuffleBlockBytes runs of " + blockRows + " rows" : key;
  }

  private static String describe(List<Stage> ordered) {
    StringBuilder out = new StringBuilder();
    for (Stage s : ordered) {
      out.append(out.length() == 0 ? "" : " -> ").append(s.describe());
    }
    return out.toString();
  }

  /** {@code 36.0 GiB}. */
  static String bytes(long n) {
    String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = n;
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return u < 0 ? n + " bytes" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
  }
}
