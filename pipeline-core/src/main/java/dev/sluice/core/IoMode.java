package dev.sluice.core;

/**
 * How a source reads the bytes of a local file, chosen when it is opened.
 *
 * <p>{@link #MMAP} maps the file read-only: rows are zero-copy views and a gather copies from the
 * page cache with plain loads. {@link #READ} maps nothing: every row, or every run of adjacent rows
 * of a gather, is one positioned read ({@code FileChannel.read(dst, position)}) straight into the
 * batch's memory. READ suits files on network filesystems (NFS, Lustre), where random access
 * through a mapping turns into one major page fault per row; it also keeps the process's resident
 * memory to what it copied out.
 *
 * <p>Either way the same bytes come out, and a file that shrinks after it was opened is a
 * {@link DatasetFormatException} naming the file and the offset.
 */
public enum IoMode {
  /** Read through a read-only memory mapping (the default for npy, shard sets and Arrow files). */
  MMAP,
  /** Read with positioned reads into pooled or batch memory; nothing is mapped. */
  READ
}
