// One tool's command line, on CLI11 (libcli11-dev; docs/tools.md says why CLI11). Every tool
// gets the same -h/--help, --version, -v/--verbose and -q/--quiet, its values are checked by
// values.h, and every usage error has one shape and exit status 2:
//   chorus-sim: bad value 'x' for --ranks: wants a whole number in 1..1048576
//   usage: chorus-sim --topo FILE [options]
//   (see chorus-sim --help)
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tools/cli/values.h"

namespace chorus::cli {

constexpr int kUsageExit = 2;

class Tool {
 public:
  // `synopsis` follows the name on the usage line: "-n N [options] [--] program [args...]".
  Tool(std::string name, std::string synopsis, const std::string& description);
  CLI::App& app() { return app_; }

  // -1 when the tool should go on; otherwise the exit status, once the help, the version or
  // the error is printed. -v raises CHORUS_DEBUG (the library's log level) unless it is set.
  int parse(int argc, char** argv);
  // A usage error found after parsing (options that do not fit together), said the same way.
  int usageError(const std::string& message) const;

  bool quiet() const { return quiet_; }
  int verbose() const { return verbose_; }

 private:
  std::string name_, synopsis_;
  CLI::App app_;
  int verbose_ = 0;
  bool quiet_ = false;
};

// An option whose text `set` checks and stores; `set` throws BadValue. The default shown by
// --help is `shown` (none when empty). The other adders below are this with a parser.
CLI::Option* checked(CLI::App& app, const std::string& names,
                     std::function<void(const std::string& option, const std::string& text)> set,
                     const std::string& typeName, const std::string& shown,
                     const std::string& help);

template <typename T>
CLI::Option* integer(CLI::App& app, const std::string& names, T* out, int64_t lo, int64_t hi,
                     const std::string& help) {
  return checked(
      app, names,
      [out, lo, hi](const std::string& opt, const std::string& v) {
        *out = T(parseInteger(opt, v, lo, hi));
      },
      "N", std::to_string(*out), help);
}

template <typename T>
CLI::Option* real(CLI::App& app, const std::string& names, T* out, double lo, double hi,
                  const std::string& help) {
  return checked(
      app, names,
      [out, lo, hi](const std::string& opt, const std::string& v) {
        *out = T(parseReal(opt, v, lo, hi));
      },
      "X", CLI::detail::to_string(*out), help);
}

template <typename T>
CLI::Option* size(CLI::App& app, const std::string& names, T* out, const std::string& help) {
  return checked(
      app, names,
      [out](const std::string& opt, const std::string& v) { *out = T(parseSize(opt, v)); }, "SIZE",
      sizeText(uint64_t(*out)), help);
}

CLI::Option* choice(CLI::App& app, const std::string& names, std::string* out,
                    const std::vector<std::string>& accepted, const std::string& help);
CLI::Option* text(CLI::App& app, const std::string& names, std::string* out,
                  const std::string& typeName, const std::string& help);

}  // namespace chorus::cli
