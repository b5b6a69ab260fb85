#include "tools/cli/values.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "common/env.h"

namespace chorus::cli {

namespace {
// CLI11's exit code for a value its validators refused; parse() turns every error into 2.
constexpr int kValidationExit = static_cast<int>(CLI::ExitCodes::ValidationError);
}  // namespace

BadValue::BadValue(const std::string& option, const std::string& value, const std::string& accepted)
    : CLI::ParseError("BadValue", "bad value '" + value + "' for " + option + ": " + accepted,
                      kValidationExit) {}

int64_t parseInteger(const std::string& option, const std::string& text, int64_t lo, int64_t hi) {
  char* end = nullptr;
  errno = 0;
  const long long v = strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi)
    throw BadValue(option, text,
                   "wants a whole number in " + std::to_string(lo) + ".." + std::to_string(hi));
  return v;
}

double parseReal(const std::string& option, const std::string& text, double lo, double hi) {
  char* end = nullptr;
  const double v = strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || v < lo || v > hi)
    throw BadValue(option, text, fmt("wants a number in %g..%g", lo, hi));
  return v;
}

uint64_t parseSize(const std::string& option, const std::string& text) {
  // "64KiB" and "64KB" read as "64K", as chorus-bench always took them.
  std::string bare = text;
  for (const char* unit : {"iB", "B"})
    if (bare.size() > 2 && bare.ends_with(unit) &&
        isalpha(static_cast<unsigned char>(bare[bare.size() - strlen(unit) - 1])))
      bare.resize(bare.size() - strlen(unit));
  const std::optional<int64_t> v = parseBytes(bare);
  if (!v) throw BadValue(option, text, "wants a size in bytes: 8, 64K, 1M, 1G");
  return uint64_t(*v);
}

void parseSizeRange(const std::string& option, const std::string& text, uint64_t* lo,
                    uint64_t* hi) {
  const size_t colon = text.find(':');
  const std::optional<int64_t> a = parseBytes(text.substr(0, colon));
  const std::optional<int64_t> b =
      colon == std::string::npos ? a : parseBytes(text.substr(colon + 1));
  if (!a || !b || *a < 1 || *b < *a)
    throw BadValue(option, text, "wants MIN:MAX sizes with 0 < MIN <= MAX, e.g. 8:1G");
  *lo = uint64_t(*a);
  *hi = uint64_t(*b);
}

std::string parseChoice(const std::string& option, const std::string& text,
                        const std::vector<std::string>& accepted) {
  for (const std::string& a : accepted)
    if (a == text) return a;
  throw BadValue(option, text, "wants " + listText(accepted));
}

std::string sizeText(uint64_t bytes) {
  const char* units = "KMG";
  std::string suffix;
  for (int i = 0; i < 3 && bytes >= 1024 && bytes % 1024 == 0; ++i) {
    bytes /= 1024;
    suffix = std::string(1, units[i]);
  }
  return std::to_string(bytes) + suffix;
}

std::string listText(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += i + 1 == names.size() ? " or " : ", ";
    s += names[i];
  }
  return s;
}

}  // namespace chorus::cli
