// Where the tools under test live: CHORUS_BIN_DIR (set by ctest), else next to the test binary.
#pragma once

#include <string>

namespace chorus::test {

std::string binDir();

}  // namespace chorus::test
