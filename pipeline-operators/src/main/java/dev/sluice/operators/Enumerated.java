package dev.sluice.operators;

/**
 * An element with its position in the pass, tf.data's {@code enumerate()} pair
 * ({@link Pipeline#enumerate()}, {@link Enumerate#of()}). A pipeline that drops an
 * {@code Enumerated} holding a {@link dev.sluice.core.Batch} (on cancel or error) closes the batch.
 *
 * @param index the position: {@code start} for the first element of the pass, then one more per element
 * @param element the element
 * @param <T> the element type
 */
public record Enumerated<T>(long index, T element) {}
