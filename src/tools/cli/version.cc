#include "tools/cli/version.h"

#include "chorus_git.h"      // generated at every build by cmake/GitCommit.cmake
#include "chorus_version.h"  // configured from version.h.in

namespace chorus::cli {

std::string versionText() {
  std::string s = "Chorus " CHORUS_VERSION_TEXT "\n";
  if (*CHORUS_GIT_COMMIT) s += "git commit " CHORUS_GIT_COMMIT "\n";
  return s + "backends: " CHORUS_BACKENDS_TEXT "\n";
}

}  // namespace chorus::cli
