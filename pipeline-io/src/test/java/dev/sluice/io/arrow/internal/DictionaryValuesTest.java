package dev.sluice.io.arrow.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A delta dictionary batch appends its values, nulls included, to the dictionary's. */
class DictionaryValuesTest {
  @Test
  void deltaStringValuesFollowTheFirstOnes() {
    TensorSpec spec = new TensorSpec("d", DType.STRING, Shape.scalar(), true);
    Column c = DictionaryValues.concat(strings(spec, "a", null, "bcd"), strings(spec, "", "ef", null));
    assertThat(c.size()).isEqualTo(6);
    assertThat(rows(c)).containsExactly("a", null, "bcd", "", "ef", null);
  }

  @Test
  void deltaFixedWidthValuesFollowTheFirstOnes() {
    TensorSpec spec = new TensorSpec("d", DType.INT64, Shape.scalar(), true);
    Column a = longs(spec, 5L, null);
    Column c = DictionaryValues.concat(a, longs(spec, 7L, 8L));
    assertThat(c.size()).isEqualTo(4);
    List<Long> out = new ArrayList<>();
    for (int i = 0; i < c.size(); i++) {
      out.add(c.isValid(i) ? c.values().getLong(i) : null);
    }
    assertThat(out).containsExactly(5L, null, 7L, 8L);
    assertThat(DictionaryValues.concat(longs(spec), a).size()).isEqualTo(2);
  }

  private static List<String> rows(Column c) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < c.size(); i++) {
      out.add(c.isValid(i) ? c.row(i).getString() : null);
    }
    return out;
  }

  private static Column strings(TensorSpec spec, String... values) {
    try (BatchBuilder b = BatchBuilder.onHeap(Schema.of(spec), Math.max(1, values.length))) {
      for (String v : values) {
        b.column(0).appendRow(v == null ? null : Tensor.ofString(v));
      }
      b.commitRange(0, values.length);
      return b.build().column(0);
    }
  }

  private static Column longs(TensorSpec spec, Long... values) {
    try (BatchBuilder b = BatchBuilder.onHeap(Schema.of(spec), Math.max(1, values.length))) {
      for (int i = 0; i < values.length; i++) {
        if (values[i] == null) {
          b.setNull(0, i);
        } else {
          b.fixedColumn(0).putLong(i * 8, values[i]);
        }
      }
      b.commitRange(0, values.length);
      return b.build().column(0);
    }
  }
}
