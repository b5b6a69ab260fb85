// openVerbsNic, defined in every build: without the rdma-core headers it says so.
#include "transport/rdma/rdma_nic.h"

#if defined(CHORUS_HAVE_IBVERBS)
#include "transport/rdma/verbs_nic.h"
#endif

namespace chorus {

Status openVerbsNic(const RdmaNicOptions& options, std::unique_ptr<RdmaNic>* out) {
#if defined(CHORUS_HAVE_IBVERBS)
  return VerbsNic::open(options, out);
#else
  (void)options;
  out->reset();
  return Status::Unsupported(
      "libibverbs: this Chorus was built without InfiniBand/RoCE verbs support (no "
      "infiniband/verbs.h at build time: install rdma-core's libibverbs-dev and rebuild with "
      "-DCHORUS_WITH_IBVERBS=ON); use CHORUS_NET=socket or ofi");
#endif
}

}  // namespace chorus
