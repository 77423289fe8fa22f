package dev.sluice.io.hdf5;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.DatasetException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Split;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Checksums;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damaged files and features Sluice does not read: each is one typed error naming the file (and
 * the dataset and feature where there is one), at open or at the read that meets the damage; never
 * wrong values.
 */
@ExtendWith(NoLeaks.class)
class Hdf5BadInputTest {
  @TempDir static Path dir;

  @BeforeAll
  static void writeWithH5py() throws Exception {
    Hdf5Files.write(dir);
  }

  /** Opens {@code name} and reads every row: the failure, wherever it happens. */
  static Executable readAll(String name) {
    return () -> {
      try (Hdf5Dataset ds = Hdf5.open(dir.resolve(name))) {
        Checksums.sha256(ds);
      }
    };
  }

  static <T extends DatasetException> T assertFails(Class<T> type, String name, String... words) {
    T e = assertThrows(type, readAll(name), name);
    assertTrue(e.getMessage().contains(dir.resolve(name).toString()), "names the file: " + e.getMessage());
    for (String w : words) {
      assertTrue(e.getMessage().contains(w), "says '" + w + "': " + e.getMessage());
    }
    return e;
  }

  @Test
  void truncatedFile() {
    assertFails(DatasetFormatException.class, "truncated.h5");
  }

  @Test
  void wrongSuperblockVersion() {
    assertFails(DatasetFormatException.class, "bad_superblock.h5", "not a readable HDF5 file");
  }

  @Test
  void corruptedChunk() {
    assertFails(DatasetFormatException.class, "corrupt_chunk.h5", "/x", "rows 0..");
  }

  @Test
  void damagedChunksFailTheColumnarPathToo() {
    for (String name : new String[] {"corrupt_chunk.h5", "chunk_past_end.h5", "fletcher_flipped.h5"}) {
      try (Hdf5Dataset ds = Hdf5.open(dir.resolve(name))) {
        BatchSplitDataset<?> sd = (BatchSplitDataset<?>) ds;
        // every batch handed out is closed; the decoded chunk rows are the source's to release (NoLeaks checks)
        DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> {
          for (Split each : sd.splits()) {
            sd.readBatches(each, 0, Long.MAX_VALUE, 7).doOnNext(Batch::close).blockLast();
          }
        }, name);
        assertTrue(e.getMessage().contains(dir.resolve(name).toString()) && e.getMessage().contains("/x"),
            e.getMessage());
      }
    }
  }

  @Test
  void flippedBitInAnUncompressedChunkFailsItsFletcher32Checksum() {
    assertFails(DatasetFormatException.class, "fletcher_flipped.h5", "/x", "chunk at [20, 0]",
        "fletcher32 checksum mismatch");
  }

  @Test
  void chunkPastTheEnd() {
    assertFails(DatasetFormatException.class, "chunk_past_end.h5", "/x");
  }

  @Test
  void chunkNeverWrittenWithANonZeroFillValueIsRefusedNotZeroFilled() {
    assertFails(DatasetFormatException.class, "sparse_fill.h5", "/s", "chunk at [5, 0]", "fill value");
  }

  @Test
  void unequalFirstDimensionsListTheLengths() {
    assertFails(DatasetFormatException.class, "unequal.h5", "/a: 10", "/b: 11", "first dimension");
  }

  @Test
  void unsupportedFeaturesNameTheDatasetAndTheFeature() {
    assertFails(UnsupportedFormatException.class, "compound.h5", "/c", "compound");
    // jhdf lists a group by reading every member's header: the error names the feature and where
    assertFails(UnsupportedFormatException.class, "external.h5", "external storage", "object header at address");
    assertFails(UnsupportedFormatException.class, "virtual.h5", "/v", "virtual");
  }

  @Test
  void missingDatasetsAndGroupsAreNamed() {
    var e = assertThrows(DatasetFormatException.class, () -> Hdf5.open(dir.resolve("features.h5"), "/nope"));
    assertTrue(e.getMessage().contains("/nope") && e.getMessage().contains("/x"), e.getMessage());
  }

  @Test
  void netcdf3ClassicIsNamedAsSuch() {
    assertFails(UnsupportedFormatException.class, "classic.nc", "netCDF-3");
  }

  @Test
  void notHdf5AtAll() throws Exception {
    Path p = dir.resolve("text.h5");
    Files.writeString(p, "just text, no superblock");
    assertFails(DatasetFormatException.class, "text.h5", "not a readable HDF5 file");
  }
}
