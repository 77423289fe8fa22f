package dev.sluice.examples.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.operators.ShuffleQuality;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.OptionalDouble;

/**
 * The shuffle-quality report of {@code sluice read --quality}: a table of the epochs and a summary
 * line, or the same as a JSON object. The reference Jaccard figure is that of a fresh uniform random
 * {@code 1/world} of the rows every epoch.
 */
final class QualityReport {
  private QualityReport() {}

  /** The Jaccard similarity a rank of {@code world} reading a fresh random part every epoch scores. */
  static double randomJaccard(int world) {
    return ShuffleQuality.randomSubsetJaccard(1.0 / world);
  }

  /** Prints the table of the epochs and the summary line of rank {@code rank} of {@code world}. */
  static void print(PrintWriter out, ShuffleQuality q, int rank, int world) {
    out.printf(Locale.ROOT, "shuffle quality of rank %d of %d over %d epoch%s:%n", rank, world, q.epochs().size(),
        q.epochs().size() == 1 ? "" : "s");
    String row = "%6s %12s %12s %9s %9s%n";
    out.printf(Locale.ROOT, row, "epoch", "rows", "distinct", "spearman", "jaccard");
    for (ShuffleQuality.Epoch e : q.epochs()) {
      out.printf(Locale.ROOT, row, e.epoch(), e.rows(), e.distinctRows(), text(e.spearman()), text(e.jaccard()));
    }
    out.printf(Locale.ROOT, "max jaccard %s (a fresh random 1/%d of the rows every epoch: %.4f), max |spearman| %s "
        + "(a uniform shuffle: about 0)%n", text(q.maxJaccard()), world, randomJaccard(world), text(q.maxAbsSpearman()));
  }

  /**
   * The report as a JSON object: {@code rank}, {@code world}, {@code epochs} (one object per epoch:
   * {@code epoch}, {@code rows}, {@code distinctRows}, {@code spearman}, {@code jaccard}),
   * {@code maxJaccard}, {@code maxAbsSpearman} and {@code randomJaccard}; a figure that is absent
   * is {@code null}.
   */
  static ObjectNode json(ShuffleQuality q, int rank, int world) {
    ObjectNode o = DatasetRun.object();
    o.put("rank", rank);
    o.put("world", world);
    ArrayNode epochs = o.putArray("epochs");
    for (ShuffleQuality.Epoch e : q.epochs()) {
      ObjectNode n = epochs.addObject();
      n.put("epoch", e.epoch());
      n.put("rows", e.rows());
      n.put("distinctRows", e.distinctRows());
      put(n, "spearman", e.spearman());
      put(n, "jaccard", e.jaccard());
    }
    put(o, "maxJaccard", q.maxJaccard());
    put(o, "maxAbsSpearman", q.maxAbsSpearman());
    o.put("randomJaccard", DatasetRun.decimal(randomJaccard(world)));
    return o;
  }

  private static void put(ObjectNode o, String name, OptionalDouble value) {
    if (value.isPresent()) {
      o.put(name, DatasetRun.decimal(value.getAsDouble()));
    } else {
      o.putNull(name);
    }
  }

  private static String text(OptionalDouble v) {
    return v.isPresent() ? String.format(Locale.ROOT, "%.4f", v.getAsDouble()) : "-";
  }
}
