// The one logger. CHORUS_DEBUG=WARN|INFO|TRACE picks the level, CHORUS_DEBUG_SUBSYS a
// comma-separated subsystem mask (INIT,BOOT,SHM,NET,COLL,TUNE,ALL; "^X" excludes X), and
// CHORUS_DEBUG_FILE a file ("%h" host, "%p" pid expanded). The macros test the level and the
// subsystem before anything is formatted, so disabled logging costs one load and a branch.
#pragma once

#include <cstdint>

namespace chorus {

enum class LogLevel : int { None = 0, Warn = 1, Info = 2, Trace = 3 };

enum LogSubsys : uint32_t {
  kLogInit = 1u << 0,
  kLogBoot = 1u << 1,
  kLogShm = 1u << 2,
  kLogNet = 1u << 3,
  kLogColl = 1u << 4,
  kLogTune = 1u << 5,
  kLogAll = ~0u,
};

struct LogSettings {
  LogLevel level = LogLevel::Warn;
  uint32_t mask = kLogAll;
};

// Read once from the environment on first use (logging is per process by nature: one stderr).
const LogSettings& logSettings();
// Re-reads the environment; for tests and for ncclResetDebugInit.
void logReload();
// From now on NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE count where the CHORUS_* names
// are unset (the NCCL face, so NCCL programs keep their logging); reloads. The logger reads
// its own variables: it is one per process and must work before any Config exists.
void logAlsoReadNcclNames();

inline bool logEnabled(LogLevel level, uint32_t subsys) {
  const LogSettings& s = logSettings();
  return static_cast<int>(level) <= static_cast<int>(s.level) && (s.mask & subsys) != 0;
}

void logWrite(LogLevel level, uint32_t subsys, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));

}  // namespace chorus

#define CHORUS_LOG(level, subsys, ...)                                                    \
  do {                                                                                    \
    if (::chorus::logEnabled(::chorus::LogLevel::level, ::chorus::subsys))                \
      ::chorus::logWrite(::chorus::LogLevel::level, ::chorus::subsys, __FILE__, __LINE__, \
                         __VA_ARGS__);                                                    \
  } while (0)

#define LOG_WARN(subsys, ...) CHORUS_LOG(Warn, subsys, __VA_ARGS__)
#define LOG_INFO(subsys, ...) CHORUS_LOG(Info, subsys, __VA_ARGS__)
#define LOG_TRACE(subsys, ...) CHORUS_LOG(Trace, subsys, __VA_ARGS__)
