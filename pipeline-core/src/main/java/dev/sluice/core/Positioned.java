package dev.sluice.core;

import java.util.Objects;

/**
 * An element of a pipeline together with the pipeline's state right after it: resuming from
 * {@link #state()} yields exactly the elements after this one. {@code Pipeline.withState} emits
 * these for {@code Flux} consumers; {@link PipelineIterator#state()} gives the same state to an
 * iterator's consumer.
 *
 * <p>The element is owned as the pipeline's elements are (close a batch when done with it).
 *
 * @param <T> the element type
 */
public final class Positioned<T> {
  private final T element;
  private final PipelineState state;

  private Positioned(T element, PipelineState state) {
    this.element = element;
    this.state = state;
  }

  /**
   * The element {@code element} and the state after it.
   *
   * @param element the element, not null
   * @param state the pipeline's state right after {@code element} was handed out
   */
  public static <T> Positioned<T> of(T element, PipelineState state) {
    return new Positioned<>(Objects.requireNonNull(element, "element"), Objects.requireNonNull(state, "state"));
  }

  /** The element. */
  public T element() {
    return element;
  }

  /** The pipeline's state right after this element: resuming from it yields the next element first. */
  public PipelineState state() {
    return state;
  }

  @Override
  public String toString() {
    return "Positioned[" + element + " at epoch " + state.epoch() + ", position " + state.position() + "]";
  }
}
