package dev.sluice.core.internal.shardfile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.DType;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Shape;
import dev.sluice.core.TensorSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The permissions a shard file is written with: the umask's by default, private when asked. */
class ShardFileWriterModeTest {
  @TempDir Path dir;

  private static final List<FieldLayout> LAYOUTS =
      FieldLayout.of(List.of(new TensorSpec("id", DType.INT64, Shape.scalar())));

  private static String umasked() throws Exception {
    Process sh = new ProcessBuilder("sh", "-c", "umask").redirectErrorStream(true).start();
    int umask = Integer.parseInt(new String(sh.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).strip(), 8);
    assertThat(sh.waitFor()).isZero();
    StringBuilder mode = new StringBuilder();
    for (int bit = 8; bit >= 0; bit--) {
      mode.append((0666 & ~umask & (1 << bit)) != 0 ? "rwx".charAt((8 - bit) % 3) : '-');
    }
    return mode.toString();
  }

  private static String mode(Path p) throws Exception {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
  }

  @Test
  void aShardFileGetsTheUmasksPermissionsUnlessItIsAskedToBePrivate() throws Exception {
    Path shared = dir.resolve("shared.shard");
    try (ShardFileWriter w = ShardFileWriter.create(shared, LAYOUTS, 0, MemoryManager.shared().pool("test"))) {
      w.finish();
    }
    assertThat(mode(shared)).isEqualTo(umasked());

    Path own = dir.resolve("own.shard");
    try (ShardFileWriter w = ShardFileWriter.create(own, LAYOUTS, 0, MemoryManager.shared().pool("test"),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
      w.finish();
    }
    assertThat(mode(own)).isEqualTo("rw-------");
    assertThat(MemoryManager.shared().outstandingBytes()).isZero();
  }
}
