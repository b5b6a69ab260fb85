#include "nccl_values.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>

namespace nccltest {

namespace {

double decodeHalf(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? NAN : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

double decodeBf16(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

double decodeE4m3(uint8_t x) {
  int e = (x >> 3) & 0xf, m = x & 7;
  if (e == 15 && m == 7) return NAN;
  double v = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
  return (x & 0x80) ? -v : v;
}

double decodeE5m2(uint8_t x) {
  int e = (x >> 2) & 0x1f, m = x & 3;
  if (e == 31) return NAN;
  double v = e == 0 ? std::ldexp(m, -16) : std::ldexp(4 + m, e - 17);
  return (x & 0x80) ? -v : v;
}

double decodeCode(uint32_t code, ncclDataType_t t) {
  switch (t) {
    case ncclFloat16:
      return decodeHalf(uint16_t(code));
    case ncclBfloat16:
      return decodeBf16(uint16_t(code));
    case ncclFloat8e4m3:
      return decodeE4m3(uint8_t(code));
    default:
      return decodeE5m2(uint8_t(code));
  }
}

// Encoding by table: every code of the small float types decoded once, exact values looked up.
uint32_t encodeSmallFloat(double v, ncclDataType_t t) {
  static std::map<double, uint32_t> tables[ncclNumTypes];
  std::map<double, uint32_t>& tab = tables[t];
  if (tab.empty()) {
    uint32_t codes = typeSize(t) == 1 ? 256 : 65536;
    for (uint32_t c = codes; c-- > 0;) {
      double d = decodeCode(c, t);
      if (!std::isnan(d)) tab[d] = c;  // descending, so +0 (code 0) wins over -0
    }
  }
  auto it = tab.find(v);
  if (it == tab.end()) throw std::runtime_error("value not exact in this type");
  return it->second;
}

template <class T>
void putAs(void* buf, size_t i, double v) {
  T x = T(v);
  memcpy(static_cast<char*>(buf) + i * sizeof(T), &x, sizeof x);
}

template <class T>
double getAs(const void* buf, size_t i) {
  T x;
  memcpy(&x, static_cast<const char*>(buf) + i * sizeof(T), sizeof x);
  return double(x);
}

}  // namespace

size_t typeSize(ncclDataType_t t) {
  static const size_t sizes[ncclNumTypes] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  return sizes[t];
}

bool isFloat(ncclDataType_t t) {
  return t >= ncclFloat16;
}

const char* typeName(ncclDataType_t t) {
  static const char* names[ncclNumTypes] = {"int8",    "uint8",    "int32",   "uint32",
                                            "int64",   "uint64",   "float16", "float32",
                                            "float64", "bfloat16", "fp8e4m3", "fp8e5m2"};
  return names[t];
}

void put(void* buf, size_t i, ncclDataType_t t, double v) {
  switch (t) {
    case ncclInt8:
      return putAs<int8_t>(buf, i, v);
    case ncclUint8:
      return putAs<uint8_t>(buf, i, v);
    case ncclInt32:
      return putAs<int32_t>(buf, i, v);
    case ncclUint32:
      return putAs<uint32_t>(buf, i, v);
    case ncclInt64:
      return putAs<int64_t>(buf, i, v);
    case ncclUint64:
      return putAs<uint64_t>(buf, i, v);
    case ncclFloat32:
      return putAs<float>(buf, i, v);
    case ncclFloat64:
      return putAs<double>(buf, i, v);
    case ncclFloat16:
    case ncclBfloat16: {
      uint16_t c = uint16_t(encodeSmallFloat(v, t));
      memcpy(static_cast<char*>(buf) + 2 * i, &c, 2);
      return;
    }
    default:
      static_cast<uint8_t*>(buf)[i] = uint8_t(encodeSmallFloat(v, t));
  }
}

double get(const void* buf, size_t i, ncclDataType_t t) {
  switch (t) {
    case ncclInt8:
      return getAs<int8_t>(buf, i);
    case ncclUint8:
      return getAs<uint8_t>(buf, i);
    case ncclInt32:
      return getAs<int32_t>(buf, i);
    case ncclUint32:
      return getAs<uint32_t>(buf, i);
    case ncclInt64:
      return getAs<int64_t>(buf, i);
    case ncclUint64:
      return getAs<uint64_t>(buf, i);
    case ncclFloat32:
      return getAs<float>(buf, i);
    case ncclFloat64:
      return getAs<double>(buf, i);
    case ncclFloat16:
    case ncclBfloat16: {
      uint16_t c;
      memcpy(&c, static_cast<const char*>(buf) + 2 * i, 2);
      return decodeCode(c, t);
    }
    default:
      return decodeCode(static_cast<const uint8_t*>(buf)[i], t);
  }
}

std::vector<unsigned char> makeBuffer(size_t count, ncclDataType_t t) {
  return std::vector<unsigned char>(count * typeSize(t) + 1, 0);
}

}  // namespace nccltest
