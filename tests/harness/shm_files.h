// What a job left in /dev/shm: segment files are named after the process that created them
// (transport/shm/segment_file.h), so a test can look for its own ranks' files alone while other
// jobs run beside it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace chorus::test {

// Names (without the leading '/') of the segment files in /dev/shm that `pid` created.
std::vector<std::string> shmSegmentsOf(pid_t pid);
// Unlinks them: a failing test must not leave its leak to the next run.
void removeShmSegments(const std::vector<std::string>& names);

}  // namespace chorus::test
