package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.core.internal.HoldsTemporary;
import dev.sluice.core.testing.ChildJvm;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PipelineStateTest {
  static final ObjectMapper JSON = new ObjectMapper();

  static PipelineState state() {
    return PipelineState.builder()
        .context(new PipelineContext(7, 3, 1, 4, 1))
        .endEpoch(10)
        .position(1234)
        .offset(0)
        .shard(4, 1)
        .source(new PipelineState.Source("random-access", 100_000, "[x: float32[16]]", ""))
        .stages(List.of("shuffle()", "shard(PAD)", "batch(256, false)"))
        .build();
  }

  @Test
  void roundTripsThroughJsonWithAFormatAndAChecksum() throws Exception {
    PipelineState s = state();
    String json = s.toJson();
    assertEquals(s, PipelineState.fromJson(json));
    ObjectNode tree = (ObjectNode) JSON.readTree(json);
    assertEquals(PipelineState.FORMAT, tree.get("format").intValue());
    assertThat(tree.get("checksum").asText()).matches("[0-9a-f]{64}");
    assertThat(json.getBytes(StandardCharsets.UTF_8).length).isLessThan(1_000);
    // whitespace is not content
    assertEquals(s, PipelineState.fromJson(JSON.writeValueAsString(tree)));
  }

  @Test
  void anEditedStateIsRefusedByItsChecksum() throws Exception {
    ObjectNode tree = (ObjectNode) JSON.readTree(state().toJson());
    tree.put("position", 1235);
    assertThatThrownBy(() -> PipelineState.fromJson(tree.toString())).isInstanceOf(CheckpointException.class)
        .hasMessageContaining("field checksum").hasMessageContaining("checksum mismatch (expected ")
        .hasMessageContaining("found " + tree.get("checksum").asText());
  }

  @Test
  void aTruncatedStateIsRefused() {
    String json = state().toJson();
    for (int cut : new int[] {0, 1, json.length() / 3, json.length() / 2, json.length() - 2}) {
      assertThatThrownBy(() -> PipelineState.fromJson(json.substring(0, cut), "ckpt.json"))
          .isInstanceOf(CheckpointException.class).hasMessageStartingWith("ckpt.json").hasMessageContaining("truncated");
    }
  }

  @Test
  void aNewerFormatAnUnknownOrMissingFieldAndOtherTextAreRefused() throws Exception {
    ObjectNode newer = (ObjectNode) JSON.readTree(state().toJson());
    newer.put("format", 2);
    newer.put("cursor", 3);
    assertThatThrownBy(() -> PipelineState.fromJson(newer.toString())).isInstanceOf(CheckpointException.class)
        .hasMessageContaining("written by a newer Sluice: format 2, and this version reads format 1");

    ObjectNode extra = (ObjectNode) JSON.readTree(state().toJson());
    extra.put("cursor", 3);
    assertThatThrownBy(() -> PipelineState.fromJson(extra.toString())).isInstanceOf(CheckpointException.class)
        .hasMessageContaining("unknown field 'cursor'");

    ObjectNode missing = (ObjectNode) JSON.readTree(state().toJson());
    missing.remove("offset");
    assertThatThrownBy(() -> PipelineState.fromJson(missing.toString())).isInstanceOf(CheckpointException.class)
        .hasMessageContaining("missing field 'offset'");

    ObjectNode wrongType = (ObjectNode) JSON.readTree(state().toJson());
    wrongType.put("epoch", "three");
    assertThatThrownBy(() -> PipelineState.fromJson(wrongType.toString())).isInstanceOf(CheckpointException.class)
        .hasMessageContaining("field epoch");

    assertThatThrownBy(() -> PipelineState.fromJson("[1, 2]")).isInstanceOf(CheckpointException.class)
        .hasMessageContaining("not a Sluice checkpoint");
    assertThatThrownBy(() -> PipelineState.fromJson("{\"position\": 3}")).isInstanceOf(CheckpointException.class)
        .hasMessageContaining("not a Sluice checkpoint: expected an integer format version but found none");
    assertThatThrownBy(() -> PipelineState.fromJson("epoch=3")).isInstanceOf(CheckpointException.class)
        .hasMessageContaining("not a Sluice checkpoint");
  }

  @Test
  void aFileIsReplacedAtomicallyAndNamedInMessages(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("loader.json");
    PipelineState s = state();
    s.write(file);
    s.at(3, 2000, 0).write(file);
    assertEquals(s.at(3, 2000, 0), PipelineState.read(file));
    assertEquals(file.toString(), PipelineState.read(file).origin());
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString())).containsExactly("loader.json");
    }
    String json = Files.readString(file);
    Files.writeString(file, json.substring(0, json.length() / 2));
    assertThatThrownBy(() -> PipelineState.read(file)).isInstanceOf(CheckpointException.class)
        .hasMessageStartingWith(file.toString()).hasMessageContaining("truncated");
    assertThatThrownBy(() -> PipelineState.read(dir.resolve("none.json"))).isInstanceOf(DatasetIOException.class)
        .hasMessageContaining("no such checkpoint file");
    Path missingDir = dir.resolve("no/such/dir/x.json");
    assertThatThrownBy(() -> s.write(missingDir)).isInstanceOf(DatasetIOException.class)
        .hasMessageContaining("cannot write the checkpoint")
        .hasMessageContaining("the directory " + missingDir.getParent() + " does not exist");
  }

  @Test
  void theNextWriteRemovesTheTemporaryOfAWriterKilledMidWrite(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("ckpt.json");
    state().write(file);
    Path left;
    try (ChildJvm writer = ChildJvm.start(HoldsTemporary.class, file.toString())) {
      String line = writer.nextLine(60);
      assertThat(line).as(writer.stderr()).isNotNull();
      left = Path.of(line);
      writer.kill(); // SIGKILL while its checkpoint is half written
    }
    assertThat(left).exists();
    assertThat(left.getFileName().toString()).startsWith(".ckpt.json.tmp-");
    assertEquals(state(), PipelineState.read(file), "the kill left the previous checkpoint whole");
    state().at(3, 2000, 0).write(file);
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString())).containsExactly("ckpt.json");
    }
  }

  @Test
  void statesAreValidated() {
    assertThatThrownBy(() -> PipelineState.builder().shard(4, 4).build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("shard in [0, 4) required but it was 4");
    assertThatThrownBy(() -> PipelineState.builder().position(-1).build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("position >= 0 required but it was -1");
    assertThat(state().at(10, 0, 0).isFinished()).isTrue();
    assertThat(state().context()).isEqualTo(new PipelineContext(7, 3, 1, 4, 1));
  }
}
