package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/** A dataset's declared access follows its interfaces unless it declares another one. */
class AccessTest {

  /** A split source of one split of {@code rows} rows, random access too when {@code random}. */
  private static class Splits implements SplitDataset<Long> {
    @Override
    public List<Split> splits() {
      return List.of(new Split("s", 3));
    }

    @Override
    public Flux<Long> read(Split split, long fromRow, long toRow) {
      return Flux.empty();
    }
  }

  private static class Both extends Splits implements RandomAccessDataset<Long> {
    @Override
    public long size() {
      return 3;
    }

    @Override
    public Long get(long index) {
      return index;
    }

    @Override
    public Flux<Long> flux(PipelineContext context) {
      return RandomAccessDataset.super.flux(context);
    }
  }

  @Test
  void theDefaultFollowsTheInterfacesRandomAccessFirst() {
    Dataset<Long> stream = context -> Flux.just(1L);
    assertThat(stream.access()).isEqualTo(Access.STREAM);
    assertThat(Datasets.range(3).access()).isEqualTo(Access.RANDOM);
    assertThat(new Splits().access()).isEqualTo(Access.BLOCKS);
    assertThat(new Both().access()).isEqualTo(Access.RANDOM);
  }

  @Test
  void aSourceOfBothKindsMayDeclareBlocks() {
    Dataset<Long> blocks = new Both() {
      @Override
      public Access access() {
        return Access.BLOCKS;
      }
    };
    assertThat(blocks.access()).isEqualTo(Access.BLOCKS);
  }
}
