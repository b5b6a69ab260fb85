// Element types and reduction operators. The numeric values match NCCL's ncclDataType_t and
// ncclRedOp_t so the NCCL face can cast instead of translating.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chorus {

enum class DataType : uint8_t {
  Int8 = 0,
  Uint8 = 1,
  Int32 = 2,
  Uint32 = 3,
  Int64 = 4,
  Uint64 = 5,
  Float16 = 6,
  Float32 = 7,
  Float64 = 8,
  Bfloat16 = 9,
  Float8E4M3 = 10,
  Float8E5M2 = 11,
};
inline constexpr int kNumDataTypes = 12;

enum class RedOp : uint8_t {
  Sum = 0,
  Prod = 1,
  Max = 2,
  Min = 3,
  Avg = 4,        // sum, then divided by the number of ranks
  PreMulSum = 5,  // each input multiplied by a scalar, then summed
};
inline constexpr int kNumRedOps = 6;

size_t dataTypeSize(DataType t);
const char* dataTypeName(DataType t);  // "float32", "bfloat16", "float8_e4m3", ...
const char* redOpName(RedOp op);       // "sum", "prod", "max", "min", "avg", "premulsum"
bool isFloatingPoint(DataType t);
bool isValidDataType(int t);
bool isValidRedOp(int op);

// Parses the names above (and common aliases: "float", "half", "bf16", "int", "fp8e4m3").
bool parseDataType(const char* s, DataType* out);
bool parseRedOp(const char* s, RedOp* out);

}  // namespace chorus
