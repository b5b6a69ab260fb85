// The option layer every tool shares (src/tools/cli): values, the error shape and exit status
// 2, --opt=value, the help and --version texts, subcommands.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/cli/tool.h"
#include "tools/cli/version.h"

namespace chorus::cli {
namespace {

struct Parsed {
  int code;
  std::string out, err;
};

Parsed parseWith(Tool& t, std::vector<std::string> args) {
  args.insert(args.begin(), "chorus-x");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  Parsed p;
  p.code = t.parse(int(argv.size()), argv.data());
  p.out = testing::internal::GetCapturedStdout();
  p.err = testing::internal::GetCapturedStderr();
  return p;
}

TEST(CliValues, SizesTakeTheSuffixesOfTheLibrary) {
  EXPECT_EQ(parseSize("-b", "8"), 8u);
  EXPECT_EQ(parseSize("-b", "64K"), 64u << 10);
  EXPECT_EQ(parseSize("-b", "1M"), 1u << 20);
  EXPECT_EQ(parseSize("-b", "1G"), 1u << 30);
  EXPECT_EQ(parseSize("-b", "256MiB"), 256u << 20);
  EXPECT_EQ(parseSize("-b", "4KB"), 4u << 10);
  EXPECT_THROW(parseSize("-b", "1X"), BadValue);
  EXPECT_THROW(parseSize("-b", "8B"), BadValue);
  EXPECT_THROW(parseSize("-b", "-1"), BadValue);
  uint64_t lo = 0, hi = 0;
  parseSizeRange("--sizes", "8:1G", &lo, &hi);
  EXPECT_EQ(lo, 8u);
  EXPECT_EQ(hi, 1u << 30);
  parseSizeRange("--sizes", "4K", &lo, &hi);
  EXPECT_EQ(lo, 4096u);
  EXPECT_EQ(hi, 4096u);
  EXPECT_THROW(parseSizeRange("--sizes", "1M:1K", &lo, &hi), BadValue);
  EXPECT_THROW(parseSizeRange("--sizes", "0:1K", &lo, &hi), BadValue);
  EXPECT_EQ(sizeText(64 << 20), "64M");
  EXPECT_EQ(sizeText(1000), "1000");
}

TEST(CliValues, ErrorsNameTheOptionTheValueAndWhatIsAccepted) {
  try {
    parseChoice("--strategy", "fsdp", {"ddp", "zero", "tensor"});
    FAIL();
  } catch (const BadValue& e) {
    EXPECT_STREQ(e.what(), "bad value 'fsdp' for --strategy: wants ddp, zero or tensor");
  }
  try {
    parseInteger("--np", "0", 1, 1024);
    FAIL();
  } catch (const BadValue& e) {
    EXPECT_STREQ(e.what(), "bad value '0' for --np: wants a whole number in 1..1024");
  }
  EXPECT_THROW(parseInteger("--np", "3x", 1, 9), BadValue);
  EXPECT_THROW(parseReal("--lr", "nan", 0, 1), BadValue);
  EXPECT_DOUBLE_EQ(parseReal("--lr", "0.5", 0, 1), 0.5);
}

struct Sample {
  Tool tool{"chorus-x", "[options] FILE...", "a sample tool"};
  int ranks = 2;
  uint64_t bytes = 64 << 10;
  std::string mode = "ring";
  std::vector<std::string> files;
  Sample() {
    integer(tool.app(), "-n,--np", &ranks, 1, 1024, "ranks");
    size(tool.app(), "-b,--bytes", &bytes, "bytes");
    choice(tool.app(), "--mode", &mode, {"ring", "tree"}, "mode");
    tool.app().add_option("files", files, "inputs");
  }
};

TEST(CliTool, BothSpellingsOfAValueAndTheLastOneWins) {
  Sample s;
  Parsed p = parseWith(s.tool, {"-n", "4", "--bytes=1M", "--mode", "tree", "--np=8", "a", "b"});
  EXPECT_EQ(p.code, -1) << p.err;
  EXPECT_EQ(s.ranks, 8);
  EXPECT_EQ(s.bytes, 1u << 20);
  EXPECT_EQ(s.mode, "tree");
  EXPECT_EQ(s.files, (std::vector<std::string>{"a", "b"}));
}

TEST(CliTool, UsageErrorsExitTwoWithOneShape) {
  const std::string tail = "usage: chorus-x [options] FILE...\n(see chorus-x --help)\n";
  Sample a;
  Parsed p = parseWith(a.tool, {"--bogus"});
  EXPECT_EQ(p.code, 2);
  EXPECT_EQ(p.err, "chorus-x: unknown option '--bogus'\n" + tail);
  Sample b;
  p = parseWith(b.tool, {"--np", "0"});
  EXPECT_EQ(p.code, 2);
  EXPECT_EQ(p.err, "chorus-x: bad value '0' for --np: wants a whole number in 1..1024\n" + tail);
  Sample c;
  p = parseWith(c.tool, {"-b", "lots"});
  EXPECT_EQ(p.code, 2);
  EXPECT_EQ(
      p.err,
      "chorus-x: bad value 'lots' for --bytes: wants a size in bytes: 8, 64K, 1M, 1G\n" + tail);
  Sample d;
  p = parseWith(d.tool, {"--mode"});
  EXPECT_EQ(p.code, 2);
  EXPECT_EQ(p.err, "chorus-x: --mode needs a value\n" + tail);
  Sample e;
  EXPECT_EQ(e.tool.usageError("no input"), 2);
}

TEST(CliTool, HelpAndVersion) {
  Sample a;
  Parsed p = parseWith(a.tool, {"--help"});
  EXPECT_EQ(p.code, 0);
  EXPECT_EQ(p.out.rfind("usage: chorus-x [options] FILE...\n", 0), 0u) << p.out;
  for (const char* o : {"--np", "--bytes", "--mode", "--version", "--verbose", "--quiet"})
    EXPECT_NE(p.out.find(o), std::string::npos) << o << " missing from\n" << p.out;
  EXPECT_NE(p.out.find("64K"), std::string::npos) << "the default size, as typed\n" << p.out;
  Sample b;
  p = parseWith(b.tool, {"--version"});
  EXPECT_EQ(p.code, 0);
  EXPECT_EQ(p.out, versionText());
  EXPECT_EQ(p.out.rfind("Chorus ", 0), 0u) << p.out;
  EXPECT_NE(p.out.find("backends: hwloc "), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("libfabric "), std::string::npos) << p.out;
}

TEST(CliTool, SubcommandsTakeTheCommonOptionsToo) {
  Tool t{"chorus-x", "COMMAND [options]", "with commands"};
  int iters = 0;
  CLI::App* run = t.app().add_subcommand("run", "runs")->fallthrough();
  integer(*run, "-n", &iters, 1, 100, "iterations");
  t.app().require_subcommand(1);
  Parsed p = parseWith(t, {"run", "-n", "3", "-q"});
  EXPECT_EQ(p.code, -1) << p.err;
  EXPECT_EQ(iters, 3);
  EXPECT_TRUE(t.quiet());
  EXPECT_TRUE(run->parsed());
}

}  // namespace
}  // namespace chorus::cli
