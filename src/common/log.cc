#include "common/log.h"

#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace chorus {

namespace {

struct SubsysName {
  const char* name;
  uint32_t bit;
};
constexpr SubsysName kSubsys[] = {{"INIT", kLogInit}, {"BOOT", kLogBoot}, {"SHM", kLogShm},
                                  {"NET", kLogNet},   {"COLL", kLogColl}, {"TUNE", kLogTune},
                                  {"ALL", kLogAll}};

const char* subsysName(uint32_t bit) {
  for (const SubsysName& s : kSubsys)
    if (s.bit == bit) return s.name;
  return "?";
}

LogLevel parseLevel(const char* v) {
  if (!v) return LogLevel::Warn;
  if (!strcasecmp(v, "TRACE")) return LogLevel::Trace;
  if (!strcasecmp(v, "INFO")) return LogLevel::Info;
  if (!strcasecmp(v, "WARN")) return LogLevel::Warn;
  if (!strcasecmp(v, "NONE") || !strcasecmp(v, "VERSION")) return LogLevel::None;
  return LogLevel::Warn;
}

uint32_t parseMask(const char* v) {
  if (!v || !*v) return kLogAll;
  bool exclude = v[0] == '^';
  uint32_t mask = 0;
  std::string list(exclude ? v + 1 : v);
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    std::string item = list.substr(pos, comma - pos);
    for (const SubsysName& s : kSubsys)
      if (!strcasecmp(item.c_str(), s.name)) mask |= s.bit;
    pos = comma + 1;
  }
  return exclude ? ~mask : mask;
}

struct Logger {
  LogSettings settings;
  FILE* out = stderr;
  std::mutex mu;
  char host[64] = "?";
  bool ncclNames = false;

  // Chorus's variable or, failing that and when asked, NCCL's.
  const char* variable(const char* chorus, const char* nccl) const {
    const char* v = getenv(chorus);
    return v || !ncclNames ? v : getenv(nccl);
  }

  void load() {
    settings.level = parseLevel(variable("CHORUS_DEBUG", "NCCL_DEBUG"));
    settings.mask = parseMask(variable("CHORUS_DEBUG_SUBSYS", "NCCL_DEBUG_SUBSYS"));
    gethostname(host, sizeof host - 1);
    if (out != stderr) fclose(out);
    out = stderr;
    if (const char* f = variable("CHORUS_DEBUG_FILE", "NCCL_DEBUG_FILE")) {
      std::string path;
      for (const char* p = f; *p; ++p) {
        if (p[0] == '%' && p[1] == 'h') {
          path += host;
          ++p;
        } else if (p[0] == '%' && p[1] == 'p') {
          path += std::to_string(getpid());
          ++p;
        } else {
          path += *p;
        }
      }
      if (FILE* fp = fopen(path.c_str(), "a")) out = fp;
    }
  }
};

Logger& logger() {
  static Logger* l = [] {
    auto* x = new Logger;  // never destroyed: threads may log during exit
    x->load();
    return x;
  }();
  return *l;
}

}  // namespace

const LogSettings& logSettings() {
  return logger().settings;
}

void logReload() {
  Logger& l = logger();
  std::lock_guard<std::mutex> g(l.mu);
  l.load();
}

void logAlsoReadNcclNames() {
  Logger& l = logger();
  std::lock_guard<std::mutex> g(l.mu);
  l.ncclNames = true;
  l.load();
}

void logWrite(LogLevel level, uint32_t subsys, const char* file, int line, const char* fmt, ...) {
  static const char* kLevel[] = {"NONE", "WARN", "INFO", "TRACE"};
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char* base = strrchr(file, '/');
  base = base ? base + 1 : file;
  Logger& l = logger();
  std::lock_guard<std::mutex> g(l.mu);
  fprintf(l.out, "%s:%d:%ld CHORUS %s %s %s:%d %s\n", l.host, getpid(), (long)syscall(SYS_gettid),
          kLevel[static_cast<int>(level)], subsysName(subsys), base, line, msg);
  fflush(l.out);
}

}  // namespace chorus
