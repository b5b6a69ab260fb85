#include "chorus/types.h"

#include <strings.h>

namespace chorus {

namespace {
struct TypeInfo {
  const char* name;
  size_t size;
  bool floating;
};
constexpr TypeInfo kTypes[kNumDataTypes] = {
    {"int8", 1, false},   {"uint8", 1, false},   {"int32", 4, false},      {"uint32", 4, false},
    {"int64", 8, false},  {"uint64", 8, false},  {"float16", 2, true},     {"float32", 4, true},
    {"float64", 8, true}, {"bfloat16", 2, true}, {"float8_e4m3", 1, true}, {"float8_e5m2", 1, true},
};
constexpr const char* kOps[kNumRedOps] = {"sum", "prod", "max", "min", "avg", "premulsum"};

struct Alias {
  const char* name;
  DataType type;
};
constexpr Alias kTypeAliases[] = {
    {"char", DataType::Int8},       {"int", DataType::Int32},
    {"half", DataType::Float16},    {"fp16", DataType::Float16},
    {"float", DataType::Float32},   {"fp32", DataType::Float32},
    {"double", DataType::Float64},  {"fp64", DataType::Float64},
    {"bf16", DataType::Bfloat16},   {"fp8e4m3", DataType::Float8E4M3},
    {"e4m3", DataType::Float8E4M3}, {"fp8e5m2", DataType::Float8E5M2},
    {"e5m2", DataType::Float8E5M2},
};
}  // namespace

bool isValidDataType(int t) {
  return t >= 0 && t < kNumDataTypes;
}
bool isValidRedOp(int op) {
  return op >= 0 && op < kNumRedOps;
}
size_t dataTypeSize(DataType t) {
  return kTypes[static_cast<int>(t)].size;
}
const char* dataTypeName(DataType t) {
  return isValidDataType(static_cast<int>(t)) ? kTypes[static_cast<int>(t)].name : "invalid";
}
bool isFloatingPoint(DataType t) {
  return kTypes[static_cast<int>(t)].floating;
}
const char* redOpName(RedOp op) {
  return isValidRedOp(static_cast<int>(op)) ? kOps[static_cast<int>(op)] : "invalid";
}

bool parseDataType(const char* s, DataType* out) {
  for (int i = 0; i < kNumDataTypes; ++i) {
    if (strcasecmp(s, kTypes[i].name) == 0) {
      *out = static_cast<DataType>(i);
      return true;
    }
  }
  for (const Alias& a : kTypeAliases) {
    if (strcasecmp(s, a.name) == 0) {
      *out = a.type;
      return true;
    }
  }
  return false;
}

bool parseRedOp(const char* s, RedOp* out) {
  for (int i = 0; i < kNumRedOps; ++i) {
    if (strcasecmp(s, kOps[i]) == 0) {
      *out = static_cast<RedOp>(i);
      return true;
    }
  }
  return false;
}

}  // namespace chorus
