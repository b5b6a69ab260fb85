// libfabric, loaded at run time so that Chorus runs where it is not installed. Only the
// library's exported entry points are looked up; everything else in its API is an inline call
// through the function tables of the objects these return.
#pragma once

#include <rdma/fabric.h>

#include <string>

namespace chorus {

struct OfiLibrary {
  int (*getinfo)(uint32_t version, const char* node, const char* service, uint64_t flags,
                 const fi_info* hints, fi_info** info);
  void (*freeinfo)(fi_info* info);
  fi_info* (*dupinfo)(const fi_info* info);
  int (*fabric)(fi_fabric_attr* attr, fid_fabric** fabric, void* context);
  const char* (*strerror)(int errnum);

  // The library, loaded once per process; nullptr (and `why`) when it cannot be.
  static const OfiLibrary* get(std::string* why);
  // "fi_getinfo: No data available (-61)": a libfabric return code, for messages.
  std::string describe(const char* call, int ret) const;
};

}  // namespace chorus
