package dev.sluice.core;

import dev.sluice.core.internal.AtomicOutput;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * Where a run of a pipeline is: an immutable value that a pipeline resumes from exactly, nothing
 * lost and nothing repeated. It is small (a few hundred bytes of JSON whatever the dataset, the
 * shuffle buffers or the parallelism) because a pass is a function of its context: the state is the
 * context (seed, epoch, rank), the number of elements of the epoch's pass handed out so far, and
 * what the run covers; the pipeline recomputes everything else (a shuffle buffer's contents, a
 * window, a parallel map's order) from it. Elements a pipeline produced ahead (prefetched, mapped
 * in parallel) and did not hand out are not counted.
 *
 * <p>A state also records what it is a state of, so that it is refused on anything else: the
 * dataset ({@link Source}: its kind, rows, schema and splits), the pipeline's shape (its stages in
 * execution order, with the arguments that decide which elements come in which order; a
 * {@code prefetch} or a parallelism is not part of the shape and may change between runs), and
 * the shard of the pipeline ({@link #shards()}, {@link #shard()}).
 *
 * <p><b>JSON.</b> {@link #toJson()} writes it with a {@code format} version and a SHA-256
 * {@code checksum} over its content; {@link #fromJson} and {@link #read} refuse a truncated, edited
 * or damaged state, or one written by a newer Sluice (a higher format), with a
 * {@link CheckpointException} naming the field or byte and expected versus found. {@link #write}
 * replaces a checkpoint file atomically.
 *
 * <pre>{@code
 * try (PipelineIterator<Batch> batches = pipeline.iterate(ctx, 10)) {
 *   for (Batch batch : batches) {
 *     try (batch) {
 *       step(batch);
 *     }
 *     if (++steps % 1000 == 0) {
 *       batches.state().write(Path.of("loader-rank" + ctx.rank() + ".json"));
 *     }
 *   }
 * }
 * // after a restart: the rest of the 10 epochs, from the element after the last checkpoint
 * try (PipelineIterator<Batch> batches = pipeline.iterate(PipelineState.read(file))) { ... }
 * }</pre>
 */
public final class PipelineState {
  /** The JSON format this version writes and reads. */
  public static final int FORMAT = 1;

  /**
   * What a state was taken on, so that it is refused on another dataset.
   *
   * @param kind {@code random-access}, {@code split} or {@code stream}
   * @param rows the number of rows, or -1 when unknown before reading
   * @param schema the fields, or empty when the source declares none
   * @param splits a SHA-256 over the split ids and row counts (empty for a source without splits)
   */
  public record Source(String kind, long rows, String schema, String splits) {
    /** A description; the strings must not be null. */
    public Source {
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(schema, "schema");
      Objects.requireNonNull(splits, "splits");
    }
  }

  private final long seed;
  private final long epoch;
  private final long endEpoch;
  private final long position;
  private final long offset;
  private final int shards;
  private final int shard;
  private final int rank;
  private final int worldSize;
  private final int localRank;
  private final Source source;
  private final List<String> stages;
  private final String origin;

  private PipelineState(Builder b, String origin) {
    this.seed = b.seed;
    this.epoch = b.epoch;
    this.endEpoch = b.endEpoch;
    this.position = b.position;
    this.offset = b.offset;
    this.shards = b.shards;
    this.shard = b.shard;
    this.rank = b.rank;
    this.worldSize = b.worldSize;
    this.localRank = b.localRank;
    this.source = Objects.requireNonNull(b.source, "source");
    this.stages = List.copyOf(b.stages);
    this.origin = origin;
    String bad = check();
    if (bad != null) {
      throw new IllegalArgumentException(bad);
    }
  }

  private PipelineState(PipelineState base, long epoch, long position, long offset) {
    this.seed = base.seed;
    this.epoch = epoch;
    this.endEpoch = base.endEpoch;
    this.position = position;
    this.offset = offset;
    this.shards = base.shards;
    this.shard = base.shard;
    this.rank = base.rank;
    this.worldSize = base.worldSize;
    this.localRank = base.localRank;
    this.source = base.source;
    this.stages = base.stages;
    this.origin = base.origin;
  }

  /** The first field out of range, as a message, or null. */
  private String check() {
    if (epoch < 0) {
      return "epoch >= 0 required but it was " + epoch;
    }
    if (endEpoch < epoch) {
      return "endEpoch >= epoch (" + epoch + ") required but it was " + endEpoch;
    }
    if (position < 0) {
      return "position >= 0 required but it was " + position;
    }
    if (offset < 0) {
      return "offset >= 0 required but it was " + offset;
    }
    if (shards <= 0) {
      return "shards > 0 required but it was " + shards;
    }
    if (shard < 0 || shard >= shards) {
      return "shard in [0, " + shards + ") required but it was " + shard;
    }
    try {
      new PipelineContext(seed, epoch, rank, worldSize, localRank);
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
    return null;
  }

  /** The seed of the run. */
  public long seed() {
    return seed;
  }

  /** The epoch whose pass the state is in. */
  public long epoch() {
    return epoch;
  }

  /** The epoch after the last one of the run ({@code Long.MAX_VALUE}: no end). */
  public long endEpoch() {
    return endEpoch;
  }

  /** Elements of the epoch's pass handed out so far (batches, after {@code batch}). */
  public long position() {
    return position;
  }

  /**
   * Elements of the epoch's shared order that an earlier world of ranks consumed before the
   * current partition of it began (0 unless the run was resumed with another number of ranks in
   * this epoch).
   */
  public long offset() {
    return offset;
  }

  /** The number of shards of the pipeline's {@code shard} stage (1 without one). */
  public int shards() {
    return shards;
  }

  /** The pipeline's shard index, in {@code [0, shards())} (0 without a shard). */
  public int shard() {
    return shard;
  }

  /** The dataset the state was taken on. */
  public Source source() {
    return source;
  }

  /** The pipeline's shape: its stages in execution order, as the state compares them. */
  public List<String> stages() {
    return stages;
  }

  /** The context of the state's epoch: seed, epoch, rank, world size and local rank of the run. */
  public PipelineContext context() {
    return new PipelineContext(seed, epoch, rank, worldSize, localRank);
  }

  /**
   * True when the state is past the run's last epoch: the state of an iterator whose run ended.
   * (The state after the last element of the run, before the end is seen, resumes to nothing too.)
   */
  public boolean isFinished() {
    return epoch >= endEpoch;
  }

  /**
   * Where the state came from, for messages: the file it was read from, or {@code "checkpoint"}.
   */
  public String origin() {
    return origin;
  }

  /**
   * The same run at another place: {@code position} elements of epoch {@code epoch} handed out,
   * after {@code offset} elements of that epoch's shared order consumed by an earlier world.
   */
  public PipelineState at(long epoch, long position, long offset) {
    if (epoch < 0 || epoch > endEpoch || position < 0 || offset < 0) {
      throw new IllegalArgumentException("epoch in [0, " + endEpoch + "], position >= 0 and offset >= 0 required but "
          + "they were " + epoch + ", " + position + " and " + offset);
    }
    return new PipelineState(this, epoch, position, offset);
  }

  /** A builder holding this state's values. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.seed = seed;
    b.epoch = epoch;
    b.endEpoch = endEpoch;
    b.position = position;
    b.offset = offset;
    b.shards = shards;
    b.shard = shard;
    b.rank = rank;
    b.worldSize = worldSize;
    b.localRank = localRank;
    b.source = source;
    b.stages = stages;
    return b;
  }

  /** A builder for a state; pipelines build their states, and tests use it to forge others. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The state every rank agrees on, from the states of all ranks of one world taken at the same
   * step: the input of a resume with another number of ranks. Checks that there is exactly one
   * state per shard {@code 0 .. shards-1}, that they are of the same run (dataset, shape, seed,
   * epoch, offset, end) and at the same position.
   *
   * @throws CheckpointException naming the ranks that disagree and how
   */
  public static PipelineState common(Collection<PipelineState> states) {
    if (states.isEmpty()) {
      throw new IllegalArgumentException("states must not be empty");
    }
    PipelineState first = states.iterator().next();
    PipelineState[] byShard = new PipelineState[first.shards];
    for (PipelineState s : states) {
      String differs = first.sameRun(s);
      if (differs != null) {
        throw new CheckpointException(s.origin, null, "not of the same run as " + first.origin + " (shard "
            + first.shard + "): " + differs);
      }
      if (s.position != first.position) {
        throw new CheckpointException(s.origin, "field position", "shard " + s.shard + " is at position " + s.position
            + " but shard " + first.shard + " is at " + first.position + ": a resume with another number of ranks "
            + "needs every rank's state from the same step");
      }
      if (byShard[s.shard] != null) {
        throw new CheckpointException(s.origin, "field shard", "two states of shard " + s.shard + " of " + s.shards
            + " (" + byShard[s.shard].origin + " and " + s.origin + ")");
      }
      byShard[s.shard] = s;
    }
    for (int i = 0; i < byShard.length; i++) {
      if (byShard[i] == null) {
        throw new CheckpointException(first.origin, null, "the state of shard " + i + " of " + first.shards
            + " is missing: a resume with another number of ranks needs the states of every rank");
      }
    }
    return byShard[0];
  }

  /** What differs between the runs of this state and {@code other} (not their shards), or null. */
  private String sameRun(PipelineState other) {
    if (shards != other.shards) {
      return "shards " + shards + " vs " + other.shards;
    }
    if (seed != other.seed) {
      return "seed " + seed + " vs " + other.seed;
    }
    if (epoch != other.epoch || offset != other.offset || endEpoch != other.endEpoch) {
      return "epoch " + epoch + " (offset " + offset + ", end " + endEpoch + ") vs " + other.epoch + " (offset "
          + other.offset + ", end " + other.endEpoch + ")";
    }
    if (!source.equals(other.source)) {
      return "dataset " + source + " vs " + other.source;
    }
    if (!stages.equals(other.stages)) {
      return "pipeline " + stages + " vs " + other.stages;
    }
    return null;
  }

  // ---------------------------------------------------------------------------------------------
  // JSON (PipelineStateJson) and files

  /**
   * The state as JSON: its fields, {@code "format": 1} and a SHA-256 {@code "checksum"} over the
   * rest, indented for reading.
   */
  public String toJson() {
    return PipelineStateJson.toJson(this);
  }

  /** {@link #fromJson(String, String)} for a state that does not come from a file. */
  public static PipelineState fromJson(String json) {
    return fromJson(json, "checkpoint");
  }

  /**
   * The state {@link #toJson()} wrote.
   *
   * @param json the JSON text
   * @param origin where it comes from (a file name), for messages and {@link #origin()}
   * @throws CheckpointException if the text is truncated, is not a state, was written by a newer
   *     Sluice, misses or adds a field, or does not match its checksum (it was edited or damaged)
   */
  public static PipelineState fromJson(String json, String origin) {
    return PipelineStateJson.fromJson(json, origin);
  }

  /**
   * Reads a state that {@link #write} wrote.
   *
   * @throws CheckpointException as {@link #fromJson(String, String)}, naming {@code file}
   * @throws DatasetIOException if the file cannot be read
   */
  public static PipelineState read(Path file) {
    Objects.requireNonNull(file, "file");
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      throw new DatasetIOException(file.toString(), "no such checkpoint file", e);
    } catch (IOException e) {
      throw new DatasetIOException(file.toString(), "cannot read the checkpoint: " + e.getMessage(), e);
    }
    return fromJson(new String(bytes, StandardCharsets.UTF_8), file.toString());
  }

  /**
   * Replaces {@code file} with this state, atomically: the JSON is written to a temporary file in
   * the same directory ({@code .<name>.tmp-<pid>-<random>}) and forced to disk, the temporary file
   * is renamed over {@code file}, and the directory is forced, so that a crash at any moment leaves
   * either the previous checkpoint or this one, never a mix. The temporary files that writers of
   * {@code file} killed mid-write left behind are deleted first.
   *
   * @throws DatasetIOException if the file cannot be written (the previous one is then left as it was)
   */
  public void write(Path file) {
    Objects.requireNonNull(file, "file");
    Path dir = file.toAbsolutePath().getParent();
    try {
      AtomicOutput.replace(file, (toJson() + "\n").getBytes(StandardCharsets.UTF_8));
    } catch (IOException | UncheckedIOException e) {
      String why = dir == null || Files.isDirectory(dir) ? e.getMessage() : "the directory " + dir + " does not exist";
      throw new DatasetIOException(file.toString(), "cannot write the checkpoint: " + why, e);
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PipelineState s && seed == s.seed && epoch == s.epoch && endEpoch == s.endEpoch
        && position == s.position && offset == s.offset && shards == s.shards && shard == s.shard && rank == s.rank
        && worldSize == s.worldSize && localRank == s.localRank && source.equals(s.source) && stages.equals(s.stages);
  }

  @Override
  public int hashCode() {
    return Objects.hash(seed, epoch, endEpoch, position, offset, shards, shard, rank, worldSize, localRank, source,
        stages);
  }

  @Override
  public String toString() {
    return "PipelineState[epoch " + epoch + " of [.., " + endEpoch + "), position " + position
        + (offset == 0 ? "" : ", offset " + offset) + ", shard " + shard + " of " + shards + ", seed " + seed + ", "
        + stages + " over " + source.kind() + " " + source.rows() + " rows]";
  }

  /** Builds a {@link PipelineState}; every field has a default (epoch 0 of a one-epoch run, shard 0 of 1). */
  public static final class Builder {
    long seed;
    long epoch;
    long endEpoch = 1;
    long position;
    long offset;
    int shards = 1;
    int shard;
    int rank;
    int worldSize = 1;
    int localRank;
    Source source = new Source("stream", -1, "", "");
    List<String> stages = List.of();

    private Builder() {}

    /** The seed, epoch, rank, world size and local rank of {@code context}. */
    public Builder context(PipelineContext context) {
      this.seed = context.seed();
      this.epoch = context.epoch();
      this.rank = context.rank();
      this.worldSize = context.worldSize();
      this.localRank = context.localRank();
      return this;
    }

    /** The epoch after the run's last one ({@code Long.MAX_VALUE}: no end). */
    public Builder endEpoch(long value) {
      this.endEpoch = value;
      return this;
    }

    /** Elements of the epoch's pass handed out. */
    public Builder position(long value) {
      this.position = value;
      return this;
    }

    /** Elements of the epoch's shared order consumed by an earlier world of ranks. */
    public Builder offset(long value) {
      this.offset = value;
      return this;
    }

    /** The pipeline's shard: {@code index} of {@code count}. */
    public Builder shard(int count, int index) {
      this.shards = count;
      this.shard = index;
      return this;
    }

    /** The dataset the state is taken on. */
    public Builder source(Source value) {
      this.source = Objects.requireNonNull(value, "source");
      return this;
    }

    /** The pipeline's shape. */
    public Builder stages(List<String> value) {
      this.stages = List.copyOf(value);
      return this;
    }

    /**
     * The state.
     *
     * @throws IllegalArgumentException naming the first field out of range
     */
    public PipelineState build() {
      return new PipelineState(this, "checkpoint");
    }

    /** The state, read from {@code origin}. */
    PipelineState build(String origin) {
      return new PipelineState(this, origin);
    }
  }
}
