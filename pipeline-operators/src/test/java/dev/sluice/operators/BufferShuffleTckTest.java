package dev.sluice.operators;

import java.util.function.Function;
import reactor.core.publisher.Flux;

/** The Reactive Streams TCK for the buffer shuffle ({@code FluxBufferShuffle}), run through testng-engine. */
public class BufferShuffleTckTest extends TransformerTck {
  @Override
  Function<Flux<Long>, Flux<Long>> transformer() {
    return Shuffle.buffer(16, 42L);
  }
}
