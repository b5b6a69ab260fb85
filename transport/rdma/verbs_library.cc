#if defined(CHORUS_HAVE_IBVERBS)
#include "transport/rdma/verbs_library.h"

#include <dlfcn.h>

#include <cstring>
#include <mutex>

namespace chorus {

namespace {

template <typename Fn>
void resolve(void* lib, const char* name, Fn* out, std::string* missing) {
  *out = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!*out && missing) *missing += (missing->empty() ? "" : ", ") + std::string(name);
}

}  // namespace

const VerbsLibrary* VerbsLibrary::get(std::string* why) {
  static VerbsLibrary lib;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    // Stays loaded: the providers it loads (libmlx5, ...) keep state for the process.
    void* handle = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = dlerror();
      error = std::string("libibverbs.so.1 could not be loaded (") + (e ? e : "unknown") +
              "); install rdma-core's libibverbs (Debian: libibverbs1, RHEL: libibverbs) or "
              "use CHORUS_NET=socket";
      return;
    }
    std::string missing;
    resolve(handle, "ibv_get_device_list", &lib.getDeviceList, &missing);
    resolve(handle, "ibv_free_device_list", &lib.freeDeviceList, &missing);
    resolve(handle, "ibv_get_device_name", &lib.getDeviceName, &missing);
    resolve(handle, "ibv_open_device", &lib.openDevice, &missing);
    resolve(handle, "ibv_close_device", &lib.closeDevice, &missing);
    resolve(handle, "ibv_query_device", &lib.queryDevice, &missing);
    resolve(handle, "ibv_query_port", &lib.queryPortCompat, &missing);
    resolve(handle, "ibv_query_gid", &lib.queryGid, &missing);
    resolve(handle, "ibv_alloc_pd", &lib.allocPd, &missing);
    resolve(handle, "ibv_dealloc_pd", &lib.deallocPd, &missing);
    resolve(handle, "ibv_reg_mr", &lib.regMr, &missing);
    resolve(handle, "ibv_dereg_mr", &lib.deregMr, &missing);
    resolve(handle, "ibv_create_comp_channel", &lib.createCompChannel, &missing);
    resolve(handle, "ibv_destroy_comp_channel", &lib.destroyCompChannel, &missing);
    resolve(handle, "ibv_create_cq", &lib.createCq, &missing);
    resolve(handle, "ibv_destroy_cq", &lib.destroyCq, &missing);
    resolve(handle, "ibv_get_cq_event", &lib.getCqEvent, &missing);
    resolve(handle, "ibv_ack_cq_events", &lib.ackCqEvents, &missing);
    resolve(handle, "ibv_create_qp", &lib.createQp, &missing);
    resolve(handle, "ibv_modify_qp", &lib.modifyQp, &missing);
    resolve(handle, "ibv_destroy_qp", &lib.destroyQp, &missing);
    resolve(handle, "ibv_wc_status_str", &lib.wcStatusStr, nullptr);
    resolve(handle, "ibv_port_state_str", &lib.portStateStr, nullptr);
    resolve(handle, "ibv_reg_dmabuf_mr", &lib.regDmabufMr, nullptr);
    if (!missing.empty()) error = "libibverbs.so.1 lacks " + missing + "; it is too old or broken";
  });
  if (!error.empty()) {
    if (why) *why = error;
    return nullptr;
  }
  return &lib;
}

int VerbsLibrary::queryPort(ibv_context* context, uint8_t port, ibv_port_attr* attr) const {
  // verbs.h's ___ibv_query_port, with the exported symbol taken from this table.
  verbs_context* vctx = verbs_get_ctx_op(context, query_port);
  if (!vctx) {
    std::memset(attr, 0, sizeof *attr);
    return queryPortCompat(context, port, reinterpret_cast<_compat_ibv_port_attr*>(attr));
  }
  return vctx->query_port(context, port, attr, sizeof *attr);
}

std::string VerbsLibrary::wcStatusText(ibv_wc_status status) const {
  std::string code = "status " + std::to_string(int(status));
  return wcStatusStr ? std::string(wcStatusStr(status)) + " (" + code + ")" : code;
}

std::string VerbsLibrary::portStateText(ibv_port_state state) const {
  std::string code = "state " + std::to_string(int(state));
  return portStateStr ? std::string(portStateStr(state)) + " (" + code + ")" : code;
}

}  // namespace chorus
#endif
