// Text to values for every tool's options, with one error shape: what was given, for which
// option, and what is accepted. Sizes are read here and nowhere else in the tools.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace chorus::cli {

// "bad value 'V' for --opt: accepted ...". A CLI::ParseError, so it ends the parse like
// CLI11's own errors do, and exits 2.
class BadValue : public CLI::ParseError {
 public:
  BadValue(const std::string& option, const std::string& value, const std::string& accepted);
};

// Each throws BadValue naming `option` when `text` does not fit.
int64_t parseInteger(const std::string& option, const std::string& text, int64_t lo, int64_t hi);
double parseReal(const std::string& option, const std::string& text, double lo, double hi);
// 8, 64K, 1M, 1G (powers of 1024; src/common/env.h parseBytes, as CHORUS_*_BYTES reads them);
// 64KiB and 64KB too.
uint64_t parseSize(const std::string& option, const std::string& text);
// MIN:MAX, or one size for both, with 0 < MIN <= MAX.
void parseSizeRange(const std::string& option, const std::string& text, uint64_t* lo, uint64_t* hi);
std::string parseChoice(const std::string& option, const std::string& text,
                        const std::vector<std::string>& accepted);

// The shortest spelling parseSize reads back: 65536 -> "64K".
std::string sizeText(uint64_t bytes);
// "a, b or c".
std::string listText(const std::vector<std::string>& names);
// printf into a string, for reports (up to 511 characters).
std::string fmt(const char* format, auto... args) {
  char buf[512];
  snprintf(buf, sizeof buf, format, args...);
  return buf;
}

}  // namespace chorus::cli
