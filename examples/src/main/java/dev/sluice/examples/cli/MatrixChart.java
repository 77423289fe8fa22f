package dev.sluice.examples.cli;

import dev.sluice.core.DatasetIOException;
import dev.sluice.core.internal.AtomicOutput;
import dev.sluice.examples.cli.BenchMatrix.Measured;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * The chart of a {@code bench --matrix} run: a bar chart of median records/s, one category per
 * setup (record kind, order, workers, access) and one series per format; a format that does not
 * offer a setup (npy and variable-length records, a directory and mmap) has no bar there.
 */
final class MatrixChart {
  private MatrixChart() {}

  /** The chart of {@code measured}: categories in the grid's order, one series per format. */
  static CategoryChart chart(List<Measured> measured, String title) {
    Map<String, Integer> rank = new LinkedHashMap<>();
    Map<String, Map<String, Double>> byFormat = new LinkedHashMap<>();
    for (Measured m : measured) {
      rank.putIfAbsent(m.cell().setup(), rank(m.cell()));
    }
    List<String> categories = new ArrayList<>(rank.keySet());
    categories.sort(Comparator.comparingInt(rank::get));
    for (Measured m : measured) {
      byFormat.computeIfAbsent(m.cell().format(), k -> new LinkedHashMap<>())
          .put(m.cell().setup(), m.recordsPerSecond() / 1e3);
    }
    CategoryChart chart = new CategoryChartBuilder().width(1400).height(700).title(title)
        .xAxisTitle("records, order, workers, access").yAxisTitle("thousand records/s (median)").build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
    chart.getStyler().setXAxisLabelRotation(45);
    chart.getStyler().setOverlapped(false);
    for (Map.Entry<String, Map<String, Double>> e : byFormat.entrySet()) {
      List<Double> y = new ArrayList<>(categories.size());
      for (String c : categories) {
        y.add(e.getValue().get(c)); // null: the format does not offer this setup
      }
      chart.addSeries(e.getKey(), categories, y);
    }
    return chart;
  }

  /** Position of a cell's setup in the grid's order (record kind, order, workers, then access), whatever the format. */
  private static int rank(BenchMatrix.Cell c) {
    return (c.fixedLength() ? 0 : 1 << 24) + (c.shuffle() ? 1 << 20 : 0) + c.workers() * 16 + c.access().ordinal();
  }

  /** Writes {@code chart} as a PNG to {@code file}, with AWT headless (no display needed). */
  static void write(CategoryChart chart, Path file) {
    if (System.getProperty("java.awt.headless") == null) {
      System.setProperty("java.awt.headless", "true");
    }
    try {
      Path parent = file.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      try (OutputStream out = Files.newOutputStream(file)) {
        BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
      }
    } catch (IOException e) {
      throw new DatasetIOException(file.toString(), "cannot write the chart: " + AtomicOutput.reason(e), e);
    }
  }
}
