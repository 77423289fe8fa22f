package dev.sluice.io.npy.internal;

import dev.sluice.core.DatasetIOException;
import dev.sluice.core.IoMode;
import dev.sluice.core.internal.Fingerprints;
import dev.sluice.core.internal.Resources;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.internal.RemoteInput;
import dev.sluice.io.internal.cache.CachedFile;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The chunk files of an npy stack in chunk order, local paths or remote URIs, and how each is read:
 * the back end of {@link NpyStackDataset}. {@link #resource} names a file in messages.
 *
 * @param <F> how a chunk file is named: a {@link Path} or a {@link URI}
 */
abstract sealed class StackChunks<F> {
  /** The chunk files, {@code 0.npy … k.npy} in that order. */
  final List<F> files;

  private StackChunks(List<F> files) {
    this.files = List.copyOf(files);
  }

  /** Chunks on the local file system; {@code metadata} is where the stack's {@code metadata.json} would be. */
  static StackChunks<Path> local(List<Path> files, Path metadata) {
    return new Local(files, metadata);
  }

  /**
   * Chunks on a Hadoop {@code FileSystem}, read with positioned reads; {@code metadata} (the stack's
   * {@code metadata.json}) may be null.
   */
  static StackChunks<URI> remote(List<URI> files, URI metadata) {
    return new Remote(files, metadata);
  }

  /**
   * {@link #remote} with each chunk opened through the node-local cache ({@code cached}, one per
   * file, closed with these chunks): their headers are read remotely, and a chunk's first row read
   * downloads it.
   */
  static StackChunks<URI> cached(List<URI> files, URI metadata, List<CachedFile> cached) {
    return new Cached(files, metadata, cached);
  }

  /** The number of chunks. */
  final int size() {
    return files.size();
  }

  /** Chunk {@code k}'s path or URI, as messages name it. */
  final String resource(int k) {
    return files.get(k).toString();
  }

  /** Chunk {@code k}'s file name. */
  abstract String name(int k);

  /** Chunk {@code k}'s header, read without mapping the chunk. */
  abstract NpyHeader header(int k, String fieldName);

  /** Opens chunk {@code k} for row reads. */
  abstract NpyArrayReader open(int k, String fieldName, long maxChunkBytes, IoMode mode);

  /** The chunk files' fingerprints, then the metadata file's when there is one. */
  abstract String fingerprint();

  /** Closes what the chunks hold open apart from their readers. */
  void close() {}

  /** Chunks on the local file system. */
  private static final class Local extends StackChunks<Path> {
    private final Path metadata;

    Local(List<Path> files, Path metadata) {
      super(files);
      this.metadata = metadata;
    }

    @Override
    String name(int k) {
      return files.get(k).getFileName().toString();
    }

    @Override
    NpyHeader header(int k, String fieldName) {
      return NpyArrayReader.readHeader(files.get(k), fieldName);
    }

    @Override
    NpyArrayReader open(int k, String fieldName, long maxChunkBytes, IoMode mode) {
      return NpyArrayReader.open(files.get(k), fieldName, maxChunkBytes, mode);
    }

    @Override
    String fingerprint() {
      StringBuilder sb = new StringBuilder(Fingerprints.files(files));
      if (Files.isRegularFile(metadata)) {
        sb.append(Fingerprints.file(metadata));
      }
      return sb.toString();
    }
  }

  /** Chunks on a Hadoop {@code FileSystem}, each read remotely with positioned reads. */
  private static sealed class Remote extends StackChunks<URI> {
    private final URI metadata;

    Remote(List<URI> files, URI metadata) {
      super(files);
      this.metadata = metadata;
    }

    @Override
    final String name(int k) {
      return RemoteFiles.name(files.get(k));
    }

    @Override
    NpyHeader header(int k, String fieldName) {
      try (RemoteInput in = RemoteFiles.open(files.get(k))) {
        return readHeader(k, in, fieldName);
      }
    }

    /** Reads chunk {@code k}'s header from {@code in}. */
    final NpyHeader readHeader(int k, RemoteInput in, String fieldName) {
      try {
        return NpyHeader.read(in.resource(), in, in.size(), fieldName);
      } catch (IOException e) {
        throw new DatasetIOException(resource(k), "cannot read its header: " + RemoteFiles.scrub(e.getMessage()), e);
      }
    }

    @Override
    NpyArrayReader open(int k, String fieldName, long maxChunkBytes, IoMode mode) {
      return openFrom(RemoteFiles.open(files.get(k)), fieldName, maxChunkBytes);
    }

    static NpyArrayReader openFrom(RemoteInput in, String fieldName, long maxChunkBytes) {
      return NpyArrayReader.open(in, in, in.fingerprint(), fieldName, maxChunkBytes);
    }

    @Override
    final String fingerprint() {
      StringBuilder sb = new StringBuilder();
      for (int k = 0; k < files.size(); k++) {
        sb.append(chunkFingerprint(k)).append('\n');
      }
      if (metadata != null) {
        sb.append(fingerprintOf(metadata)).append('\n');
      }
      return sb.toString();
    }

    /** Chunk {@code k}'s fingerprint. */
    String chunkFingerprint(int k) {
      return fingerprintOf(files.get(k));
    }

    private static String fingerprintOf(URI u) {
      try (RemoteInput in = RemoteFiles.open(u)) {
        return in.fingerprint();
      }
    }
  }

  /** Remote chunks read through the node-local cache, one {@link CachedFile} per chunk. */
  private static final class Cached extends Remote {
    private final List<CachedFile> cached;

    Cached(List<URI> files, URI metadata, List<CachedFile> cached) {
      super(files, metadata);
      this.cached = List.copyOf(cached);
    }

    @Override
    NpyHeader header(int k, String fieldName) {
      return readHeader(k, cached.get(k), fieldName);
    }

    @Override
    NpyArrayReader open(int k, String fieldName, long maxChunkBytes, IoMode mode) {
      CachedFile in = cached.get(k);
      in.opened(); // rows are read next: the header too comes from the local copy
      return openFrom(in, fieldName, maxChunkBytes);
    }

    @Override
    String chunkFingerprint(int k) {
      return cached.get(k).fingerprint();
    }

    @Override
    void close() {
      Resources.closeAll(cached);
    }
  }
}
