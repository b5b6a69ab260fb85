#include "common/env.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace chorus {

std::optional<std::string> envString(const char* name) {
  const char* v = getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::optional<std::string> envFirst(std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (auto v = envString(n)) return v;
  return std::nullopt;
}

std::optional<int64_t> envInt(const char* name, std::string* error) {
  auto v = envString(name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  long long x = strtoll(v->c_str(), &end, 0);
  if (*end != '\0') {
    if (error) *error = std::string(name) + "='" + *v + "' is not an integer";
    return std::nullopt;
  }
  return x;
}

std::optional<double> envDouble(const char* name, std::string* error) {
  auto v = envString(name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  double x = strtod(v->c_str(), &end);
  if (*end != '\0') {
    if (error) *error = std::string(name) + "='" + *v + "' is not a number";
    return std::nullopt;
  }
  return x;
}

std::optional<int64_t> parseBytes(const std::string& s) {
  char* end = nullptr;
  errno = 0;
  long long x = strtoll(s.c_str(), &end, 0);
  if (end == s.c_str() || errno == ERANGE) return std::nullopt;
  int64_t mult = 1;
  switch (*end) {
    case 'k':
    case 'K':
      mult = 1 << 10;
      ++end;
      break;
    case 'm':
    case 'M':
      mult = 1 << 20;
      ++end;
      break;
    case 'g':
    case 'G':
      mult = 1 << 30;
      ++end;
      break;
    default:
      break;
  }
  // Too large for 64 bits once scaled (tests/fuzz found "9223372036854775807G" overflowing).
  if (*end != '\0' || x < 0 || x > INT64_MAX / mult) return std::nullopt;
  return x * mult;
}

std::optional<int64_t> envBytes(const char* name, std::string* error) {
  auto v = envString(name);
  if (!v) return std::nullopt;
  auto x = parseBytes(*v);
  if (!x && error) *error = std::string(name) + "='" + *v + "' is not a size (e.g. 512K, 4M)";
  return x;
}

}  // namespace chorus
