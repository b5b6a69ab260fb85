// Finding the port the verbs provider uses: the first device (in libibverbs' order) and its
// first active port that CHORUS_IB_HCA allows, with its address: the LID on InfiniBand, a GID
// on RoCE (CHORUS_IB_GID_INDEX, or the choice of verbs_gid.h).
#pragma once

#include <infiniband/verbs.h>

#include <string>

#include "chorus/status.h"
#include "transport/rdma/rdma_nic.h"
#include "transport/rdma/verbs_library.h"

namespace chorus {

struct VerbsPort {
  ibv_context* context = nullptr;  // open; the caller closes it
  std::string device;              // "mlx5_0"
  int port = 0;
  ibv_device_attr deviceAttr{};
  ibv_port_attr portAttr{};
  bool roce = false;  // Ethernet link layer: address by GID, not LID
  int gidIndex = 0;
  ibv_gid gid{};
  std::string address;  // "RoCE v2, GID 3 ::ffff:10.0.0.1" / "InfiniBand, LID 5"
};

// Unsupported naming what is missing (no device, no active port, nothing CHORUS_IB_HCA
// allows), InvalidArgument for a malformed CHORUS_IB_HCA, SystemError when the device fails.
Status openVerbsPort(const VerbsLibrary& lib, const RdmaNicOptions& options, VerbsPort* out);

}  // namespace chorus
