// rdma-core's libibverbs, loaded at run time so that Chorus runs where it is not installed.
// Only the library's exported entry points are looked up (dlsym finds the default symbol
// version, IBVERBS_1.1 where 1.0 exists too). Posting, polling and arming the CQ are inline
// calls through the context's function table and need nothing from here; neither may this
// provider call a libibverbs function by name, which would make libchorus need the library
// at load time (`nm -D -u libchorus.so | grep ibv_` must stay empty).
#pragma once

#include <infiniband/verbs.h>

#include <string>

namespace chorus {

struct VerbsLibrary {
  ibv_device** (*getDeviceList)(int* num);
  void (*freeDeviceList)(ibv_device** list);
  const char* (*getDeviceName)(ibv_device* device);
  ibv_context* (*openDevice)(ibv_device* device);
  int (*closeDevice)(ibv_context* context);
  int (*queryDevice)(ibv_context* context, ibv_device_attr* attr);
  // The exported ibv_query_port, which fills only the old, shorter port attributes; call
  // queryPort() below, which is what verbs.h's ibv_query_port macro does.
  int (*queryPortCompat)(ibv_context* context, uint8_t port, _compat_ibv_port_attr* attr);
  int (*queryGid)(ibv_context* context, uint8_t port, int index, ibv_gid* gid);
  ibv_pd* (*allocPd)(ibv_context* context);
  int (*deallocPd)(ibv_pd* pd);
  // The exported ibv_reg_mr (verbs.h wraps it in a macro of the same name).
  ibv_mr* (*regMr)(ibv_pd* pd, void* addr, size_t length, int access);
  int (*deregMr)(ibv_mr* mr);
  ibv_comp_channel* (*createCompChannel)(ibv_context* context);
  int (*destroyCompChannel)(ibv_comp_channel* channel);
  ibv_cq* (*createCq)(ibv_context* context, int cqe, void* cqContext, ibv_comp_channel* channel,
                      int compVector);
  int (*destroyCq)(ibv_cq* cq);
  int (*getCqEvent)(ibv_comp_channel* channel, ibv_cq** cq, void** cqContext);
  void (*ackCqEvents)(ibv_cq* cq, unsigned int nevents);
  ibv_qp* (*createQp)(ibv_pd* pd, ibv_qp_init_attr* attr);
  int (*modifyQp)(ibv_qp* qp, ibv_qp_attr* attr, int mask);
  int (*destroyQp)(ibv_qp* qp);
  // Optional: null where the library lacks them.
  const char* (*wcStatusStr)(ibv_wc_status status);
  const char* (*portStateStr)(ibv_port_state state);
  // GPUDirect RDMA through dma-buf (rdma-core 34+); not used yet.
  ibv_mr* (*regDmabufMr)(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd,
                         int access);

  // The library, loaded once per process; nullptr (and `why`) when it cannot be.
  static const VerbsLibrary* get(std::string* why);

  // ibv_query_port as verbs.h does it: the extended query where the provider has one.
  int queryPort(ibv_context* context, uint8_t port, ibv_port_attr* attr) const;
  std::string wcStatusText(ibv_wc_status status) const;
  std::string portStateText(ibv_port_state state) const;
};

}  // namespace chorus
