// What every tool's --version prints: the Chorus version (CMake's project version), the git
// commit it was built from when built from a checkout, and the optional backends compiled in.
#pragma once

#include <string>

namespace chorus::cli {

std::string versionText();

}  // namespace chorus::cli
