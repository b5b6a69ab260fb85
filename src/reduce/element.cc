#include "reduce/element.h"

#include <cmath>
#include <cstdint>

#include "reduce/float_types.h"

namespace chorus {

namespace {

template <class T>
T loadAs(const void* base, size_t i) {
  return static_cast<const T*>(base)[i];
}
template <class T>
void storeAs(void* base, size_t i, T v) {
  static_cast<T*>(base)[i] = v;
}

// v reduced modulo 2^64 after truncation; every step stays inside the range where the
// conversions are defined.
uint64_t wrapToU64(double v) {
  if (std::isnan(v)) return 0;
  const double kTwo64 = 18446744073709551616.0;
  double m = std::fmod(std::trunc(v), kTwo64);  // an integer in (-2^64, 2^64), same sign as v
  if (m >= 0) return static_cast<uint64_t>(m);
  return 0 - static_cast<uint64_t>(-m);
}

}  // namespace

double loadElement(DataType t, const void* base, size_t i) {
  switch (t) {
    case DataType::Int8:
      return loadAs<int8_t>(base, i);
    case DataType::Uint8:
      return loadAs<uint8_t>(base, i);
    case DataType::Int32:
      return loadAs<int32_t>(base, i);
    case DataType::Uint32:
      return loadAs<uint32_t>(base, i);
    case DataType::Int64:
      return static_cast<double>(loadAs<int64_t>(base, i));
    case DataType::Uint64:
      return static_cast<double>(loadAs<uint64_t>(base, i));
    case DataType::Float16:
      return halfBitsToFloat(loadAs<uint16_t>(base, i));
    case DataType::Float32:
      return loadAs<float>(base, i);
    case DataType::Float64:
      return loadAs<double>(base, i);
    case DataType::Bfloat16:
      return bf16BitsToFloat(loadAs<uint16_t>(base, i));
    case DataType::Float8E4M3:
      return e4m3BitsToFloat(loadAs<uint8_t>(base, i));
    case DataType::Float8E5M2:
      return e5m2BitsToFloat(loadAs<uint8_t>(base, i));
  }
  return 0;
}

void storeElement(DataType t, void* base, size_t i, double v) {
  // Narrow floats go through float first: double->float->narrow can double-round, but
  // the kernels compute in float, so this matches what a reduction would store.
  const float f = static_cast<float>(v);
  switch (t) {
    case DataType::Int8:
      return storeAs(base, i, static_cast<int8_t>(wrapToU64(v)));
    case DataType::Uint8:
      return storeAs(base, i, static_cast<uint8_t>(wrapToU64(v)));
    case DataType::Int32:
      return storeAs(base, i, static_cast<int32_t>(wrapToU64(v)));
    case DataType::Uint32:
      return storeAs(base, i, static_cast<uint32_t>(wrapToU64(v)));
    case DataType::Int64:
      return storeAs(base, i, static_cast<int64_t>(wrapToU64(v)));
    case DataType::Uint64:
      return storeAs(base, i, wrapToU64(v));
    case DataType::Float16:
      return storeAs(base, i, floatToHalfBits(f));
    case DataType::Float32:
      return storeAs(base, i, f);
    case DataType::Float64:
      return storeAs(base, i, v);
    case DataType::Bfloat16:
      return storeAs(base, i, floatToBf16Bits(f));
    case DataType::Float8E4M3:
      return storeAs(base, i, floatToE4m3Bits(f));
    case DataType::Float8E5M2:
      return storeAs(base, i, floatToE5m2Bits(f));
  }
}

double unitRoundoff(DataType t) {
  switch (t) {
    case DataType::Float16:
      return std::ldexp(1.0, -11);
    case DataType::Float32:
      return std::ldexp(1.0, -24);
    case DataType::Float64:
      return std::ldexp(1.0, -53);
    case DataType::Bfloat16:
      return std::ldexp(1.0, -8);
    case DataType::Float8E4M3:
      return std::ldexp(1.0, -4);
    case DataType::Float8E5M2:
      return std::ldexp(1.0, -3);
    default:
      return 0;
  }
}

}  // namespace chorus
