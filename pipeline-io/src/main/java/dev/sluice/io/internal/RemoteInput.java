package dev.sluice.io.internal;

import dev.sluice.core.internal.mapped.FileInput;
import dev.sluice.core.internal.mapped.PositionedReader;

/** A file named by a remote URI, read with positioned reads; no Hadoop type in its signature. */
public interface RemoteInput extends FileInput, PositionedReader {
  /** One line naming the file with its URI, size and modification time: a rewrite changes it. */
  String fingerprint();
}
