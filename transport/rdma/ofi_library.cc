#if defined(CHORUS_HAVE_LIBFABRIC)
#include "transport/rdma/ofi_library.h"

#include <dlfcn.h>

#include <mutex>

namespace chorus {

namespace {

template <typename Fn>
bool resolve(void* lib, const char* name, Fn* out, std::string* missing) {
  *out = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!*out) *missing += (missing->empty() ? "" : ", ") + std::string(name);
  return *out != nullptr;
}

}  // namespace

const OfiLibrary* OfiLibrary::get(std::string* why) {
  static OfiLibrary lib;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    void* handle = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = dlerror();
      error = std::string("libfabric.so.1 could not be loaded (") + (e ? e : "unknown") +
              "); install libfabric (Debian: libfabric1) or use CHORUS_NET=socket";
      return;
    }
    std::string missing;
    resolve(handle, "fi_getinfo", &lib.getinfo, &missing);
    resolve(handle, "fi_freeinfo", &lib.freeinfo, &missing);
    resolve(handle, "fi_dupinfo", &lib.dupinfo, &missing);
    resolve(handle, "fi_fabric", &lib.fabric, &missing);
    resolve(handle, "fi_strerror", &lib.strerror, &missing);
    if (!missing.empty()) error = "libfabric.so.1 lacks " + missing + "; it is too old or broken";
  });
  if (!error.empty()) {
    if (why) *why = error;
    return nullptr;
  }
  return &lib;
}

std::string OfiLibrary::describe(const char* call, int ret) const {
  return std::string(call) + ": " + strerror(ret < 0 ? -ret : ret) + " (" + std::to_string(ret) +
         ")";
}

}  // namespace chorus
#endif
