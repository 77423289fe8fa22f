package dev.sluice.io.internal;

import java.nio.ByteBuffer;

/** Big-endian values made little-endian in place: the formats that store either order (npy, HDF5). */
public final class ByteSwap {
  private ByteSwap() {}

  /** Reverses the bytes of each {@code width}-byte unit of {@code b[at..at+length)}. */
  public static void swap(ByteBuffer b, int at, int length, int width) {
    switch (width) {
      case 1 -> { }
      case 2 -> {
        for (int i = at; i < at + length; i += 2) {
          b.putShort(i, Short.reverseBytes(b.getShort(i)));
        }
      }
      case 4 -> {
        for (int i = at; i < at + length; i += 4) {
          b.putInt(i, Integer.reverseBytes(b.getInt(i)));
        }
      }
      case 8 -> {
        for (int i = at; i < at + length; i += 8) {
          b.putLong(i, Long.reverseBytes(b.getLong(i)));
        }
      }
      default -> throw new IllegalStateException("cannot swap " + width + "-byte units");
    }
  }
}
