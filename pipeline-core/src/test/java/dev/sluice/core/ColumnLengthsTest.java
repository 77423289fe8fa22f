package dev.sluice.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The true lengths a padded column keeps (paddedBatch). */
class ColumnLengthsTest {
  private static final TensorSpec TOKENS = new TensorSpec("tokens", DType.INT64, Shape.of(3));

  @Test
  void aPaddedColumnKeepsEachRowsTrueShape() {
    Tensor padded = Tensor.wrap(DType.INT64, Shape.of(2, 3), Tensor.of(new long[] {1, 0, 0, 2, 2, 2}).data());
    Tensor lengths = Tensor.wrap(DType.INT64, Shape.of(2, 1), Tensor.of(new long[] {1, 3}).data());
    Column c = new Column(TOKENS, 2, padded, null, null, lengths);
    assertTrue(c.hasLengths());
    assertEquals(Shape.of(1), c.trueShape(0));
    assertEquals(3, c.length(1));
    assertEquals(1, c.length(0));
    assertTrue(c.toString().contains("padded"));
  }

  @Test
  void anUnpaddedColumnReportsItsSpecShape() {
    Column c = new Column(TOKENS, 1, Tensor.wrap(DType.INT64, Shape.of(1, 3), Tensor.of(new long[] {4, 5, 6}).data()), null, null);
    assertFalse(c.hasLengths());
    assertEquals(Shape.of(3), c.trueShape(0));
    assertEquals(3, c.length(0));
    assertEquals("column 'tokens' was not padded and keeps no lengths",
        assertThrows(IllegalStateException.class, c::lengths).getMessage());
  }

  @Test
  void lengthsOfTheWrongShapeAreRefused() {
    Tensor padded = Tensor.wrap(DType.INT64, Shape.of(1, 3), Tensor.of(new long[] {4, 5, 6}).data());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new Column(TOKENS, 1, padded, null, null, Tensor.of(new long[] {3, 3})));
    assertEquals("column 'tokens': lengths must be int64 [1, 1] but they are int64[2]", e.getMessage());
  }
}
