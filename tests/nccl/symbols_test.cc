// The exported symbol set covers NCCL's host API: every nccl*/pnccl* function declared in
// NVIDIA's installed nccl.h resolves in Chorus's libnccl.so.2, opened the way a program (or
// LD_PRELOAD) would find it.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

std::string readFile(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Declarations only: comments mention names too ("ncclGroupEnd() call"), so drop them first.
std::string withoutComments(const std::string& s) {
  static const std::regex comments(R"(/\*[\s\S]*?\*/|//[^\n]*)");
  return std::regex_replace(s, comments, " ");
}

std::set<std::string> declaredFunctions(const std::string& header) {
  static const std::regex decl(R"(\b(p?nccl[A-Za-z0-9_]+)\s*\()");
  std::set<std::string> names;
  std::string text = withoutComments(header);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), decl); it != std::sregex_iterator();
       ++it)
    names.insert((*it)[1]);
  return names;
}

TEST(NcclSymbols, EveryFunctionOfNvidiasHeaderIsExported) {
  std::string header = readFile(NVIDIA_NCCL_HEADER);
  ASSERT_FALSE(header.empty()) << "cannot read " << NVIDIA_NCCL_HEADER;
  std::set<std::string> names = declaredFunctions(header);
  ASSERT_GE(names.size(), 80u) << "the header parse found too few functions";
  void* lib = dlopen(CHORUS_NCCL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  for (const std::string& n : names)
    EXPECT_NE(dlsym(lib, n.c_str()), nullptr) << n << " is missing";
  // Both forms exist for every entry point, the profiling one included.
  for (const std::string& n : names) {
    if (n.rfind("nccl", 0) == 0) {
      EXPECT_TRUE(names.count("p" + n)) << "header lacks p" << n;
    }
  }
  dlclose(lib);
}

// The host half of NCCL 2.28's device API (nccl_device.h and nccl_device/*.h: the functions
// marked NCCL_EXTERN_C __host__) is exported too, both names of each.
TEST(NcclSymbols, EveryHostFunctionOfNvidiasDeviceHeadersIsExported) {
  const std::string dir = std::string(NVIDIA_NCCL_HEADER).substr(0, strlen(NVIDIA_NCCL_HEADER) - 6);
  std::string text = readFile((dir + "nccl_device.h").c_str());
  ASSERT_FALSE(text.empty()) << "cannot read " << dir << "nccl_device.h";
  for (const char* part : {"core.h", "lsa_barrier.h", "gin_barrier.h", "ll_a2a.h"})
    text += readFile((dir + "nccl_device/" + part).c_str());
  static const std::regex decl(
      R"(NCCL_EXTERN_C\s+__host__\s+[A-Za-z0-9_]+\s+(nccl[A-Za-z0-9_]+)\s*\()");
  std::set<std::string> names;
  const std::string code = withoutComments(text);
  for (auto it = std::sregex_iterator(code.begin(), code.end(), decl); it != std::sregex_iterator();
       ++it)
    names.insert((*it)[1]);
  ASSERT_GE(names.size(), 11u) << "the header parse found too few functions";
  void* lib = dlopen(CHORUS_NCCL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  for (const std::string& n : names) {
    EXPECT_NE(dlsym(lib, n.c_str()), nullptr) << n << " is missing";
    EXPECT_NE(dlsym(lib, ("p" + n).c_str()), nullptr) << "p" << n << " is missing";
  }
  dlclose(lib);
}

}  // namespace
