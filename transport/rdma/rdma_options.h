// The RDMA transport's settings, taken from the communicator's Config (whose fields say more).
#pragma once

#include <cstddef>
#include <string>

#include "chorus/config.h"
#include "chorus/status.h"
#include "transport/rdma/rdma_nic.h"

namespace chorus {

struct RdmaOptions {
  std::string net = "auto";  // CHORUS_NET: auto, ib, ofi, socket
  std::string ofiProvider;
  std::string ibHca;
  int ibGidIndex = -1;
  int ibTrafficClass = 0;
  std::string ifname;  // CHORUS_SOCKET_IFNAME: picks the interface of IP providers
  int lanes = 2;
  size_t chunkBytes = 512 << 10;
  int slots = 0;  // 0: each receiver sizes its FIFOs from its peer count (slotsFor)
  size_t zeroCopyBytes = 64 << 10;
  double timeoutSec = 300;

  // The most slots a peer may have: a write's immediate data names its slot in 8 bits.
  static constexpr int kMaxSlots = 256;

  // Messages in flight from each of `peers` senders: `slots` where set, else as many as a
  // 64 MiB budget of FIFO allows, 16 to 64 (a few peers get the depth that pays between hosts,
  // a thousand cost what 16 always did).
  int slotsFor(size_t peers, size_t slotBytes) const;

  static RdmaOptions fromConfig(const Config& config);
  Status validate() const;
  // What opening a provider needs; `forced`: CHORUS_NET names this provider, so software
  // providers (libfabric's tcp, sockets) count.
  RdmaNicOptions nicOptions(bool loopbackOk, bool forced) const;
};

}  // namespace chorus
