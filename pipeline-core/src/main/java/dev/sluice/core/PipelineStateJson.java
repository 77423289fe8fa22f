package dev.sluice.core;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.core.io.JsonEOFException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.sluice.core.PipelineState.Source;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The JSON form of a {@link PipelineState}: its fields, {@code "format"} and a SHA-256
 * {@code "checksum"} over the rest; reading refuses a truncated, foreign, newer, edited or damaged
 * text with a {@link CheckpointException} naming the origin and the field.
 */
final class PipelineStateJson {
  private static final ObjectMapper JSON = JsonMapper.builder()
      .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
      .serializationInclusion(JsonInclude.Include.NON_NULL)
      .build();

  private PipelineStateJson() {}

  /** The JSON form; the record components are the fields, in this order. */
  private record Json(Integer format, Long seed, Long epoch, Long endEpoch, Long position, Long offset, Integer shards,
      Integer shard, Context context, Source dataset, List<String> pipeline, String checksum) {}

  /** The context fields of the JSON form. */
  private record Context(Integer rank, Integer worldSize, Integer localRank) {}

  private static Json json(PipelineState s, String checksum) {
    PipelineContext c = s.context();
    return new Json(PipelineState.FORMAT, s.seed(), s.epoch(), s.endEpoch(), s.position(), s.offset(), s.shards(),
        s.shard(), new Context(c.rank(), c.worldSize(), c.localRank()), s.source(), s.stages(), checksum);
  }

  /** The SHA-256 of the canonical JSON of {@code json} without its checksum, in hex. */
  private static String checksum(Json json) {
    Json content = new Json(json.format, json.seed, json.epoch, json.endEpoch, json.position, json.offset, json.shards,
        json.shard, json.context, json.dataset, json.pipeline, null);
    try {
      byte[] canonical = JSON.writeValueAsBytes(content);
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(canonical));
    } catch (JsonProcessingException | NoSuchAlgorithmException e) {
      throw new IllegalStateException("cannot compute a pipeline state's checksum", e);
    }
  }

  /** {@link PipelineState#toJson()}. */
  static String toJson(PipelineState s) {
    Json content = json(s, null);
    try {
      return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(json(s, checksum(content)));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write a pipeline state as JSON", e);
    }
  }

  /** {@link PipelineState#fromJson(String, String)}. */
  static PipelineState fromJson(String json, String origin) {
    Objects.requireNonNull(json, "json");
    Objects.requireNonNull(origin, "origin");
    byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
    if (json.isBlank()) {
      throw new CheckpointException(origin, "byte " + bytes.length, "truncated: the checkpoint is empty");
    }
    JsonNode tree;
    try {
      tree = JSON.readTree(bytes);
    } catch (JsonEOFException e) {
      throw new CheckpointException(origin, "byte " + offsetOf(e.getLocation(), bytes.length), "truncated: the JSON "
          + "ends before the state is complete", e);
    } catch (StreamReadException e) {
      throw new CheckpointException(origin, at(e.getLocation()), "not a Sluice checkpoint: "
          + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new CheckpointException(origin, null, "not a Sluice checkpoint: " + e.getMessage(), e);
    }
    if (tree == null || !tree.isObject()) {
      throw new CheckpointException(origin, null, "not a Sluice checkpoint: expected a JSON object");
    }
    JsonNode format = tree.get("format");
    if (format == null || !format.canConvertToInt() || !format.isIntegralNumber()) {
      throw new CheckpointException(origin, "field format", "not a Sluice checkpoint: expected an integer format "
          + "version but found " + (format == null ? "none" : format));
    }
    if (format.intValue() > PipelineState.FORMAT) {
      throw new CheckpointException(origin, "field format", "written by a newer Sluice: format " + format.intValue()
          + ", and this version reads format " + PipelineState.FORMAT + " (or older)");
    }
    if (format.intValue() < 1) {
      throw new CheckpointException(origin, "field format", "not a Sluice checkpoint: format " + format.intValue());
    }
    Json j;
    try {
      j = JSON.treeToValue(tree, Json.class);
    } catch (UnrecognizedPropertyException e) {
      throw new CheckpointException(origin, "field " + e.getPropertyName(), "unknown field '" + e.getPropertyName()
          + "' in a format " + PipelineState.FORMAT + " state (the file was edited)", e);
    } catch (MismatchedInputException e) {
      throw new CheckpointException(origin, "field " + path(e), "expected " + e.getTargetType().getSimpleName()
          .toLowerCase(java.util.Locale.ROOT) + ": " + e.getOriginalMessage(), e);
    } catch (JsonProcessingException e) {
      throw new CheckpointException(origin, null, "not a Sluice checkpoint: " + e.getOriginalMessage(), e);
    }
    requireFields(j, origin);
    String expected = checksum(j);
    if (!expected.equals(j.checksum)) {
      throw new CheckpointException(origin, "field checksum", "checksum mismatch (expected " + expected + ", found "
          + j.checksum + "): the state was edited or damaged");
    }
    PipelineState.Builder b = PipelineState.builder();
    b.seed = j.seed;
    b.epoch = j.epoch;
    b.endEpoch = j.endEpoch;
    b.position = j.position;
    b.offset = j.offset;
    b.shards = j.shards;
    b.shard = j.shard;
    b.rank = j.context.rank;
    b.worldSize = j.context.worldSize;
    b.localRank = j.context.localRank;
    b.source = j.dataset;
    b.stages = j.pipeline;
    try {
      return b.build(origin);
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new CheckpointException(origin, null, "out of range: " + e.getMessage(), e);
    }
  }

  private static void requireFields(Json j, String origin) {
    TreeMap<String, Object> fields = new TreeMap<>();
    fields.put("seed", j.seed);
    fields.put("epoch", j.epoch);
    fields.put("endEpoch", j.endEpoch);
    fields.put("position", j.position);
    fields.put("offset", j.offset);
    fields.put("shards", j.shards);
    fields.put("shard", j.shard);
    fields.put("context", j.context);
    fields.put("dataset", j.dataset);
    fields.put("pipeline", j.pipeline);
    fields.put("checksum", j.checksum);
    if (j.context != null) {
      fields.put("context.rank", j.context.rank);
      fields.put("context.worldSize", j.context.worldSize);
      fields.put("context.localRank", j.context.localRank);
    }
    for (var e : fields.entrySet()) {
      if (e.getValue() == null) {
        throw new CheckpointException(origin, "field " + e.getKey(), "missing field '" + e.getKey() + "' (the file was "
            + "truncated or edited)");
      }
    }
  }

  private static String path(MismatchedInputException e) {
    List<String> names = new ArrayList<>();
    for (var ref : e.getPath()) {
      names.add(ref.getFieldName() != null ? ref.getFieldName() : String.valueOf(ref.getIndex()));
    }
    return String.join(".", names);
  }

  private static String at(JsonLocation location) {
    return location == null ? null : "line " + location.getLineNr() + ", column " + location.getColumnNr();
  }

  private static long offsetOf(JsonLocation location, long length) {
    long at = location == null ? -1 : location.getByteOffset();
    return at >= 0 ? at : length;
  }
}
