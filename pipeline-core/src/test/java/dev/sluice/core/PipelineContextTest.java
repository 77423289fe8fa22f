package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class PipelineContextTest {

  @Test
  void noVariablesMeansRankZeroOfOne() {
    PipelineContext ctx = PipelineContext.fromEnvironment(Map.of("HOME", "/root"));
    assertThat(ctx).isEqualTo(PipelineContext.defaults());
    assertThat(ctx.seed()).isZero();
    assertThat(ctx.epoch()).isZero();
  }

  @Test
  void torchrunVariables() {
    PipelineContext ctx = PipelineContext.fromEnvironment(Map.of("RANK", "3", "WORLD_SIZE", "8", "LOCAL_RANK", "1"));
    assertThat(ctx.rank()).isEqualTo(3);
    assertThat(ctx.worldSize()).isEqualTo(8);
    assertThat(ctx.localRank()).isEqualTo(1);
    assertThat(ctx.seed()).as("the seed is shared by every rank").isZero();
  }

  @Test
  void slurmVariables() {
    PipelineContext ctx = PipelineContext.fromEnvironment(Map.of("SLURM_PROCID", "5", "SLURM_NTASKS", "6", "SLURM_LOCALID", "2"));
    assertThat(ctx.rank()).isEqualTo(5);
    assertThat(ctx.worldSize()).isEqualTo(6);
    assertThat(ctx.localRank()).isEqualTo(2);
  }

  @Test
  void torchrunWinsOverSlurm() {
    PipelineContext ctx = PipelineContext.fromEnvironment(Map.of(
        "RANK", "1", "WORLD_SIZE", "2", "SLURM_PROCID", "5", "SLURM_NTASKS", "6"));
    assertThat(ctx.rank()).isEqualTo(1);
    assertThat(ctx.worldSize()).isEqualTo(2);
  }

  @Test
  void rankOutOfRangeNamesBothVariables() {
    assertThatThrownBy(() -> PipelineContext.fromEnvironment(Map.of("RANK", "5", "WORLD_SIZE", "4")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("RANK=5")
        .hasMessageContaining("WORLD_SIZE=4");
    assertThatThrownBy(() -> PipelineContext.fromEnvironment(Map.of("SLURM_PROCID", "-1", "SLURM_NTASKS", "4")))
        .hasMessageContaining("SLURM_PROCID=-1");
  }

  @Test
  void badValuesAreNamed() {
    assertThatThrownBy(() -> PipelineContext.fromEnvironment(Map.of("RANK", "one", "WORLD_SIZE", "4")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("RANK='one': expected an integer");
    assertThatThrownBy(() -> PipelineContext.fromEnvironment(Map.of("RANK", "0", "WORLD_SIZE", "0")))
        .hasMessageContaining("WORLD_SIZE=0");
    assertThatThrownBy(() -> PipelineContext.fromEnvironment(Map.of("RANK", "0", "WORLD_SIZE", "2", "LOCAL_RANK", "x")))
        .hasMessageContaining("LOCAL_RANK='x'");
    assertThatThrownBy(() -> PipelineContext.fromEnvironment(Map.of("WORLD_SIZE", "4")))
        .hasMessageContaining("RANK is not");
  }

  @Test
  void constructorValidatesRanges() {
    assertThatThrownBy(() -> new PipelineContext(0, 0, 2, 2, 0)).hasMessage("rank in [0, 2) required but it was 2");
    assertThatThrownBy(() -> new PipelineContext(0, -1, 0, 1, 0)).hasMessage("epoch >= 0 required but it was -1");
  }

  @Test
  void withersAndNextEpoch() {
    PipelineContext ctx = PipelineContext.defaults().withSeed(42).withRank(1, 4).nextEpoch();
    assertThat(ctx).isEqualTo(new PipelineContext(42, 1, 1, 4, 0));
  }

  @Test
  void travelsInTheReactorContext() {
    PipelineContext ctx = PipelineContext.defaults().withEpoch(7);
    StepVerifier.create(Mono.deferContextual(c -> Mono.just(PipelineContext.from(c))).contextWrite(ctx.asReactorContext()))
        .expectNext(ctx)
        .verifyComplete();
    StepVerifier.create(Mono.deferContextual(c -> Mono.just(PipelineContext.from(c))))
        .expectNext(PipelineContext.defaults())
        .verifyComplete();
  }
}
