package dev.sluice.core;

/** IEEE 754 half-precision conversion (Java 17 has no {@code Float.float16ToFloat}). */
public final class Float16 {
  private Float16() {}

  /** The float value of the half-precision bits {@code h}. */
  public static float toFloat(short h) {
    int bits = h & 0xffff;
    int sign = (bits & 0x8000) << 16;
    int exp = (bits >>> 10) & 0x1f;
    int mant = bits & 0x3ff;
    if (exp == 0x1f) {
      return Float.intBitsToFloat(sign | 0x7f800000 | (mant << 13));
    }
    if (exp == 0) {
      if (mant == 0) {
        return Float.intBitsToFloat(sign);
      }
      // subnormal: value = mant * 2^-24
      float v = mant * 0x1p-24f;
      return sign != 0 ? -v : v;
    }
    return Float.intBitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
  }

  /** The half-precision bits nearest to {@code f} (round to nearest even). */
  public static short fromFloat(float f) {
    int bits = Float.floatToRawIntBits(f);
    int sign = (bits >>> 16) & 0x8000;
    int exp = (bits >>> 23) & 0xff;
    int mant = bits & 0x7fffff;
    if (exp == 0xff) {
      return (short) (sign | 0x7c00 | (mant != 0 ? 0x200 | (mant >>> 13) : 0));
    }
    int e = exp - 127 + 15;
    if (e >= 0x1f) {
      return (short) (sign | 0x7c00);
    }
    if (e <= 0) {
      if (e < -10) {
        return (short) sign;
      }
      mant |= 0x800000;
      int shift = 14 - e;
      int half = mant >>> shift;
      int rem = mant & ((1 << shift) - 1);
      int mid = 1 << (shift - 1);
      if (rem > mid || (rem == mid && (half & 1) != 0)) {
        half++;
      }
      return (short) (sign | half);
    }
    int half = (e << 10) | (mant >>> 13);
    int rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1) != 0)) {
      half++;
    }
    return (short) (sign | half);
  }
}
