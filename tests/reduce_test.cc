// CpuReducer kernels against a reference written here from the documented semantics, for every
// ISA this CPU has, every type, op and a spread of sizes around the vector widths. Every
// operation rounds once, so even the narrow floats must match the reference bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "reduce/element.h"
#include "reduce/float_types.h"
#include "reduce/reducer.h"

namespace chorus {
namespace {

const size_t kSizes[] = {0, 1, 3, 15, 16, 17, 63, 64, 65, 1000, 4099};
const RedOp kOps[] = {RedOp::Sum, RedOp::Prod, RedOp::Max, RedOp::Min};
const char* const kIsas[] = {"scalar", "avx2", "avx512"};

// ---- the reference ----

template <class T>
T refOp(RedOp op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);  // mod 2^64
    switch (op) {
      case RedOp::Sum:
        return static_cast<T>(x + y);
      case RedOp::Prod:
        return static_cast<T>(x * y);
      case RedOp::Max:
        return a > b ? a : b;
      default:
        return a < b ? a : b;
    }
  } else {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    switch (op) {
      case RedOp::Sum:
        return a + b;
      case RedOp::Prod:
        return a * b;
      case RedOp::Max:
        return a == b ? b : std::fmax(a, b);  // documented: b on +0/-0
      default:
        return a == b ? b : std::fmin(a, b);
    }
  }
}

template <class T>
T refDivide(T x, uint64_t d) {
  if constexpr (std::is_floating_point_v<T>)
    return x / static_cast<T>(d);
  else if constexpr (std::is_signed_v<T>)
    return static_cast<T>(int64_t{x} / static_cast<int64_t>(d));
  else
    return static_cast<T>(uint64_t{x} / d);
}

template <class T, class F>
void refLoop(void* out, const void* a, const void* b, size_t n, F f) {
  for (size_t i = 0; i < n; ++i)
    static_cast<T*>(out)[i] = f(static_cast<const T*>(a)[i], static_cast<const T*>(b)[i]);
}
// Narrow floats: decode both, one float op, round once.
template <class S, class F, class Dec, class Enc>
void refNarrow(void* out, const void* a, const void* b, size_t n, F f, Dec dec, Enc enc) {
  for (size_t i = 0; i < n; ++i)
    static_cast<S*>(out)[i] =
        enc(f(dec(static_cast<const S*>(a)[i]), dec(static_cast<const S*>(b)[i])));
}

// out[i] = f(a[i], b[i]) computed the reference way for type t; f is generic over the
// compute type (an integer type, float or double).
template <class F>
void refApply(DataType t, void* out, const void* a, const void* b, size_t n, F f) {
  switch (t) {
    case DataType::Int8:
      return refLoop<int8_t>(out, a, b, n, f);
    case DataType::Uint8:
      return refLoop<uint8_t>(out, a, b, n, f);
    case DataType::Int32:
      return refLoop<int32_t>(out, a, b, n, f);
    case DataType::Uint32:
      return refLoop<uint32_t>(out, a, b, n, f);
    case DataType::Int64:
      return refLoop<int64_t>(out, a, b, n, f);
    case DataType::Uint64:
      return refLoop<uint64_t>(out, a, b, n, f);
    case DataType::Float32:
      return refLoop<float>(out, a, b, n, f);
    case DataType::Float64:
      return refLoop<double>(out, a, b, n, f);
    case DataType::Float16:
      return refNarrow<uint16_t>(out, a, b, n, f, halfBitsToFloat, floatToHalfBits);
    case DataType::Bfloat16:
      return refNarrow<uint16_t>(out, a, b, n, f, bf16BitsToFloat, floatToBf16Bits);
    case DataType::Float8E4M3:
      return refNarrow<uint8_t>(out, a, b, n, f, e4m3BitsToFloat, floatToE4m3Bits);
    case DataType::Float8E5M2:
      return refNarrow<uint8_t>(out, a, b, n, f, e5m2BitsToFloat, floatToE5m2Bits);
  }
}

// ---- inputs ----

// Wide floats: mostly moderate values over many binades, some specials (NaN, inf, +-0, the
// subnormal and overflow edges) and some raw bit patterns. Other types: raw random bytes,
// which for the narrow formats already covers every code.
void fillRandom(DataType t, void* p, size_t n, std::mt19937_64& rng) {
  const size_t bytes = n * dataTypeSize(t);
  for (size_t i = 0; i < bytes; ++i) static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(rng());
  if (t != DataType::Float32 && t != DataType::Float64) return;
  const double specials[] = {0.0,    -0.0,    INFINITY, -INFINITY,
                             NAN,    1.0,     -1.0,     std::numeric_limits<float>::denorm_min(),
                             3.0e38, -3.0e38, 1e-40};
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (size_t i = 0; i < n; ++i) {
    const unsigned r = rng() % 8;
    if (r == 0) continue;  // keep the raw bits
    double v = r == 1 ? specials[rng() % std::size(specials)]
                      : std::ldexp(unit(rng), static_cast<int>(rng() % 60) - 30);
    storeElement(t, p, i, v);
  }
}

// Equal bit patterns, or both NaN (payloads may legitimately differ between ISAs).
void expectSame(DataType t, const void* got, const void* want, size_t n, const std::string& what) {
  const size_t sz = dataTypeSize(t);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* g = static_cast<const uint8_t*>(got) + i * sz;
    const uint8_t* w = static_cast<const uint8_t*>(want) + i * sz;
    if (memcmp(g, w, sz) == 0) continue;
    const double gv = loadElement(t, got, i), wv = loadElement(t, want, i);
    if (std::isnan(gv) && std::isnan(wv)) continue;
    ADD_FAILURE() << what << " " << dataTypeName(t) << " element " << i << " of " << n << ": got "
                  << gv << " want " << wv;
    return;
  }
}

class ReduceTest : public ::testing::TestWithParam<std::tuple<const char*, DataType>> {
 protected:
  void SetUp() override {
    r_ = CpuReducer::forIsa(std::get<0>(GetParam()));
    if (!r_) GTEST_SKIP() << std::get<0>(GetParam()) << " not supported on this CPU";
    t_ = std::get<1>(GetParam());
    sz_ = dataTypeSize(t_);
  }
  // Buffers start one element past an allocation boundary so vector loads are unaligned.
  std::vector<uint8_t> buffer(size_t n) { return std::vector<uint8_t>((n + 1) * sz_); }
  uint8_t* at(std::vector<uint8_t>& v) { return v.data() + sz_; }

  const CpuReducer* r_ = nullptr;
  DataType t_{};
  size_t sz_ = 0;
  std::mt19937_64 rng_{12345};
};

TEST_P(ReduceTest, MatchesReference) {
  for (RedOp op : kOps) {
    for (size_t n : kSizes) {
      auto a = buffer(n), b = buffer(n), got = buffer(n), want = buffer(n);
      fillRandom(t_, at(a), n, rng_);
      fillRandom(t_, at(b), n, rng_);
      refApply(t_, at(want), at(a), at(b), n, [op](auto x, auto y) { return refOp(op, x, y); });
      r_->reduce(t_, op, at(got), at(a), at(b), n);
      const std::string what = std::string(redOpName(op)) + " n=" + std::to_string(n);
      expectSame(t_, at(got), at(want), n, what);
      // In place, either side: the executor accumulates into its receive buffer.
      auto inA = a, inB = b;
      r_->reduce(t_, op, at(inA), at(inA), at(b), n);
      expectSame(t_, at(inA), at(want), n, what + " dst==a");
      r_->reduce(t_, op, at(inB), at(a), at(inB), n);
      expectSame(t_, at(inB), at(want), n, what + " dst==b");
    }
  }
}

TEST_P(ReduceTest, ScaleMatchesReference) {
  for (size_t n : kSizes) {
    auto src = buffer(n), scalar = buffer(1), got = buffer(n), want = buffer(n);
    fillRandom(t_, at(src), n, rng_);
    storeElement(t_, at(scalar), 0, 3.0 - static_cast<double>(n % 7));  // includes 0, negatives
    auto splat = buffer(n);
    for (size_t i = 0; i < n; ++i) memcpy(at(splat) + i * sz_, at(scalar), sz_);
    refApply(t_, at(want), at(src), at(splat), n,
             [](auto x, auto s) { return refOp(RedOp::Prod, x, s); });
    r_->scale(t_, at(got), at(src), n, at(scalar));
    expectSame(t_, at(got), at(want), n, "scale n=" + std::to_string(n));
    r_->scale(t_, at(src), at(src), n, at(scalar));
    expectSame(t_, at(src), at(want), n, "scale in place n=" + std::to_string(n));
  }
}

TEST_P(ReduceTest, DivideMatchesReference) {
  for (uint64_t d : {1, 3, 8, 7}) {
    for (size_t n : kSizes) {
      auto src = buffer(n), got = buffer(n), want = buffer(n);
      fillRandom(t_, at(src), n, rng_);
      refApply(t_, at(want), at(src), at(src), n, [d](auto x, auto) { return refDivide(x, d); });
      r_->divide(t_, at(got), at(src), n, d);
      const std::string what = "divide by " + std::to_string(d) + " n=" + std::to_string(n);
      expectSame(t_, at(got), at(want), n, what);
      r_->divide(t_, at(src), at(src), n, d);
      expectSame(t_, at(src), at(want), n, what + " in place");
    }
  }
}

std::vector<DataType> allTypes() {
  std::vector<DataType> v;
  for (int t = 0; t < kNumDataTypes; ++t) v.push_back(static_cast<DataType>(t));
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllIsas, ReduceTest,
                         ::testing::Combine(::testing::ValuesIn(kIsas),
                                            ::testing::ValuesIn(allTypes())),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) + "_" +
                                  dataTypeName(std::get<1>(info.param));
                         });

TEST(CpuReducer, GetPicksAnAvailableIsa) {
  const CpuReducer& r = CpuReducer::get();
  EXPECT_EQ(CpuReducer::forIsa(r.isa()), &r);
  EXPECT_NE(CpuReducer::forIsa("scalar"), nullptr);
  EXPECT_EQ(CpuReducer::forIsa("sse9"), nullptr);
  EXPECT_EQ(CpuReducer::forIsa(nullptr), nullptr);
}

TEST(CpuReducer, SignedDivideTruncatesTowardZero) {
  const CpuReducer& r = CpuReducer::get();
  int64_t v[4] = {-7, 7, std::numeric_limits<int64_t>::min(), -1};
  r.divide(DataType::Int64, v, v, 4, 2);
  EXPECT_EQ(v[0], -3);
  EXPECT_EQ(v[1], 3);
  EXPECT_EQ(v[2], std::numeric_limits<int64_t>::min() / 2);
  EXPECT_EQ(v[3], 0);
  int8_t w[2] = {-128, 127};
  r.divide(DataType::Int8, w, w, 2, 3);
  EXPECT_EQ(w[0], -42);
  EXPECT_EQ(w[1], 42);
}

TEST(Element, StoreWrapsIntegersAndRoundsFloats) {
  uint8_t u8 = 0;
  storeElement(DataType::Uint8, &u8, 0, 257.9);
  EXPECT_EQ(u8, 1);
  int32_t i32 = 0;
  storeElement(DataType::Int32, &i32, 0, -1.5);
  EXPECT_EQ(i32, -1);
  storeElement(DataType::Int32, &i32, 0, 4294967297.0);
  EXPECT_EQ(i32, 1);
  uint64_t u64 = 0;
  storeElement(DataType::Uint64, &u64, 0, -1.0);
  EXPECT_EQ(u64, ~uint64_t{0});
  uint16_t h = 0;
  storeElement(DataType::Float16, &h, 0, 1.0);
  EXPECT_EQ(h, 0x3C00);
  EXPECT_EQ(loadElement(DataType::Float16, &h, 0), 1.0);
  EXPECT_EQ(unitRoundoff(DataType::Bfloat16), std::ldexp(1.0, -8));
  EXPECT_EQ(unitRoundoff(DataType::Int32), 0.0);
}

// ---- conversions ----

struct Format {
  const char* name;
  int expBits, manBits;
  bool hasInf;
  uint32_t maxFinite;     // largest finite positive code
  uint32_t overflowCode;  // what too-large positive values become
  float (*decode)(uint32_t);
  uint32_t (*encode)(float);
};
const Format kFormats[] = {
    {"fp16", 5, 10, true, 0x7bff, 0x7c00, [](uint32_t h) { return halfBitsToFloat(uint16_t(h)); },
     [](float f) -> uint32_t { return floatToHalfBits(f); }},
    {"bf16", 8, 7, true, 0x7f7f, 0x7f80, [](uint32_t h) { return bf16BitsToFloat(uint16_t(h)); },
     [](float f) -> uint32_t { return floatToBf16Bits(f); }},
    {"e4m3", 4, 3, false, 0x7e, 0x7e, [](uint32_t h) { return e4m3BitsToFloat(uint8_t(h)); },
     [](float f) -> uint32_t { return floatToE4m3Bits(f); }},
    {"e5m2", 5, 2, true, 0x7b, 0x7b, [](uint32_t h) { return e5m2BitsToFloat(uint8_t(h)); },
     [](float f) -> uint32_t { return floatToE5m2Bits(f); }},
};

// The value of a code from the format's definition, in double.
double formulaValue(const Format& f, uint32_t code) {
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t allOnes = (1u << f.expBits) - 1, manMask = (1u << f.manBits) - 1;
  const uint32_t field = (code >> f.manBits) & allOnes, man = code & manMask;
  const bool neg = (code >> (f.expBits + f.manBits)) & 1;
  if (field == allOnes && f.hasInf) return man ? NAN : (neg ? -INFINITY : INFINITY);
  if (field == allOnes && man == manMask) return NAN;  // e4m3's only NaN
  const double v = field == 0 ? std::ldexp(man, 1 - bias - f.manBits)
                              : std::ldexp(man + (1u << f.manBits), int(field) - bias - f.manBits);
  return neg ? -v : v;
}

class ConversionTest : public ::testing::TestWithParam<Format> {};

TEST_P(ConversionTest, EveryCodeDecodesAndRoundTrips) {
  const Format& f = GetParam();
  const uint32_t codes = 1u << (1 + f.expBits + f.manBits);
  for (uint32_t c = 0; c < codes; ++c) {
    const float v = f.decode(c);
    const double want = formulaValue(f, c);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(v)) << f.name << " code " << c;
      ASSERT_TRUE(std::isnan(f.decode(f.encode(v)))) << f.name << " code " << c;
      continue;
    }
    ASSERT_EQ(double(v), want) << f.name << " code " << c;
    ASSERT_EQ(std::signbit(v), std::signbit(want)) << f.name << " code " << c;
    // Saturating formats (e5m2) decode infinity but never produce it.
    const uint32_t signBit = c & (1u << (f.expBits + f.manBits));
    const bool saturated = std::isinf(want) && f.overflowCode == f.maxFinite;
    ASSERT_EQ(f.encode(v), saturated ? (f.maxFinite | signBit) : c) << f.name << " code " << c;
  }
}

// Between every two neighbouring finite codes: the exact midpoint goes to the even code, the
// floats either side of it to the nearer code. Covers subnormals and the zero/min-subnormal tie.
TEST_P(ConversionTest, RoundsToNearestEven) {
  const Format& f = GetParam();
  const uint32_t signBit = 1u << (f.expBits + f.manBits);
  for (uint32_t lo = 0; lo < f.maxFinite; ++lo) {
    const uint32_t hi = lo + 1;
    const float mid = float((double(f.decode(lo)) + f.decode(hi)) / 2);
    const uint32_t even = (lo & 1) ? hi : lo;
    ASSERT_EQ(f.encode(mid), even) << f.name << " tie between " << lo << " and " << hi;
    ASSERT_EQ(f.encode(-mid), even | signBit) << f.name << " negative tie at " << lo;
    ASSERT_EQ(f.encode(std::nextafter(mid, 0.0f)), lo) << f.name << " below mid " << lo;
    ASSERT_EQ(f.encode(std::nextafter(mid, INFINITY)), hi) << f.name << " above mid " << lo;
  }
}

TEST_P(ConversionTest, OverflowSaturatesOrGoesInfinite) {
  const Format& f = GetParam();
  const uint32_t signBit = 1u << (f.expBits + f.manBits);
  const float max = f.decode(f.maxFinite);
  // Just above the max rounds back to it; fp16/bf16 overflow only past the next midpoint.
  EXPECT_EQ(f.encode(std::nextafter(max, INFINITY)), f.maxFinite) << f.name;
  for (float v : {max * 1.5f, max * 4.0f, INFINITY}) {
    EXPECT_EQ(f.encode(v), f.overflowCode) << f.name << " " << v;
    EXPECT_EQ(f.encode(-v), f.overflowCode | signBit) << f.name << " " << -v;
  }
  EXPECT_EQ(f.encode(max), f.maxFinite);
  EXPECT_TRUE(std::isnan(f.decode(f.encode(NAN))));
  EXPECT_TRUE(std::isnan(f.decode(f.encode(-NAN))));
  EXPECT_EQ(f.encode(-0.0f), signBit);
  EXPECT_EQ(f.encode(0.0f), 0u);
  EXPECT_EQ(f.encode(-1e-45f), signBit);  // underflows to a zero that keeps its sign
}

INSTANTIATE_TEST_SUITE_P(AllFormats, ConversionTest, ::testing::ValuesIn(kFormats),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Conversion, KnownValues) {
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7BFF);
  EXPECT_EQ(floatToHalfBits(65519.0f), 0x7BFF);
  EXPECT_EQ(floatToHalfBits(65520.0f), 0x7C00);  // the tie above the max rounds to infinity
  EXPECT_EQ(floatToHalfBits(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -25)), 0x0000);             // tie to even (zero)
  EXPECT_EQ(floatToHalfBits(std::ldexp(3.0f, -25)), 0x0002);             // tie to even (two)
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -14)), 0x0400);             // min normal
  EXPECT_EQ(floatToHalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // tie, even below
  EXPECT_EQ(floatToHalfBits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // tie, even above
  EXPECT_EQ(halfBitsToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(floatToBf16Bits(1.0f), 0x3F80);
  EXPECT_EQ(floatToBf16Bits(-1.0f), 0xBF80);
  EXPECT_EQ(floatToBf16Bits(3.0e38f), 0x7F62);
  EXPECT_EQ(floatToBf16Bits(std::numeric_limits<float>::max()), 0x7F80);  // rounds up to inf
  EXPECT_EQ(bf16BitsToFloat(0x4049), 3.140625f);
  EXPECT_EQ(floatToE4m3Bits(448.0f), 0x7E);
  EXPECT_EQ(floatToE4m3Bits(1.0f), 0x38);
  EXPECT_EQ(floatToE4m3Bits(std::ldexp(1.0f, -9)), 0x01);  // smallest subnormal
  EXPECT_EQ(floatToE4m3Bits(-1000.0f), 0xFE);
  EXPECT_EQ(e4m3BitsToFloat(0x7E), 448.0f);
  EXPECT_TRUE(std::isnan(e4m3BitsToFloat(0x7F)));
  EXPECT_TRUE(std::isnan(e4m3BitsToFloat(0xFF)));
  EXPECT_EQ(floatToE5m2Bits(57344.0f), 0x7B);
  EXPECT_EQ(floatToE5m2Bits(1.0f), 0x3C);
  EXPECT_EQ(floatToE5m2Bits(std::ldexp(1.0f, -16)), 0x01);  // smallest subnormal
  EXPECT_EQ(floatToE5m2Bits(1e9f), 0x7B);
  EXPECT_EQ(e5m2BitsToFloat(0x7B), 57344.0f);
  EXPECT_EQ(e5m2BitsToFloat(0x7C), INFINITY);
  EXPECT_TRUE(std::isnan(e5m2BitsToFloat(0x7D)));
}

}  // namespace
}  // namespace chorus
