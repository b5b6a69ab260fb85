#if defined(CHORUS_HAVE_IBVERBS)
#include "transport/rdma/verbs_nic.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "transport/rdma/verbs_params.h"

namespace chorus {

namespace {

class VerbsRegion final : public RdmaRegion {
 public:
  VerbsRegion(const VerbsLibrary& lib, ibv_mr* mr) : lib_(lib), mr_(mr) {}
  ~VerbsRegion() override {
    if (int err = lib_.deregMr(mr_))
      LOG_WARN(kLogNet, "verbs: ibv_dereg_mr failed: %s", strerror(err));
  }
  // write() reads the lkey of a gather entry's region from here.
  void* desc() const override { return mr_; }
  uint64_t key() const override { return mr_->rkey; }
  uint64_t remoteAddress(const void* p) const override { return reinterpret_cast<uintptr_t>(p); }

 private:
  const VerbsLibrary& lib_;
  ibv_mr* mr_;
};

}  // namespace

Status VerbsNic::open(const RdmaNicOptions& options, std::unique_ptr<RdmaNic>* out) {
  std::string why;
  const VerbsLibrary* lib = VerbsLibrary::get(&why);
  if (!lib) return Status::Unsupported("libibverbs: " + why);
  return openWith(*lib, options, out);
}

Status VerbsNic::openWith(const VerbsLibrary& lib, const RdmaNicOptions& options,
                          std::unique_ptr<RdmaNic>* out) {
  VerbsPort port;
  CHORUS_RETURN_IF_ERROR(openVerbsPort(lib, options, &port));
  std::unique_ptr<VerbsNic> nic(new VerbsNic(lib, port, options));
  CHORUS_RETURN_IF_ERROR(nic->setUp());
  *out = std::move(nic);
  return Status::Ok();
}

VerbsNic::VerbsNic(const VerbsLibrary& lib, const VerbsPort& port, const RdmaNicOptions& options)
    : lib_(lib), port_(port), options_(options) {}

Status VerbsNic::setUp() {
  maxGather_ = verbsMaxGather(port_.deviceAttr.max_sge);
  if (maxGather_ == 0)
    return Status::Unsupported("verbs: " + describe() + " allows " +
                               std::to_string(port_.deviceAttr.max_sge) +
                               " gather entries per write, fewer than the 2 Chorus needs; "
                               "choose another device with CHORUS_IB_HCA");
  pd_ = lib_.allocPd(port_.context);
  if (!pd_)
    return Status::SystemError("verbs: ibv_alloc_pd on " + describe() +
                               " failed: " + strerror(errno));
  channel_ = lib_.createCompChannel(port_.context);
  if (!channel_)
    return Status::SystemError("verbs: ibv_create_comp_channel on " + describe() +
                               " failed: " + strerror(errno));
  // Non-blocking, so that waitForEvents reads an event only when poll() saw one coming and
  // never sleeps past its timeout in ibv_get_cq_event.
  int flags = fcntl(channel_->fd, F_GETFL);
  if (flags < 0 || fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK) < 0)
    return Status::FromErrno(errno, "verbs: making the completion channel non-blocking");
  wakeFd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wakeFd_ < 0) return Status::FromErrno(errno, "verbs: eventfd for interruptWait");
  return Status::Ok();
}

VerbsNic::~VerbsNic() {
  // Queue pairs, then the CQ they complete on, its channel, the PD, the device. Regions must
  // be gone by now: a PD with memory registered in it cannot be freed.
  disconnect(false);
  if (cq_) lib_.destroyCq(cq_);
  if (channel_) lib_.destroyCompChannel(channel_);
  if (pd_ && lib_.deallocPd(pd_))
    LOG_WARN(kLogNet, "verbs: ibv_dealloc_pd on %s failed (a registered region outlived it)",
             describe().c_str());
  if (port_.context) lib_.closeDevice(port_.context);
  if (wakeFd_ >= 0) close(wakeFd_);
}

void VerbsNic::disconnect(bool /*broken*/) {
  for (auto& lane : lanes_) {
    if (lane->qp) lib_.destroyQp(lane->qp);
    lane->qp = nullptr;
  }
}

std::string VerbsNic::describe() const {
  return port_.device + ":" + std::to_string(port_.port) + " (" + port_.address + ")";
}

Status VerbsNic::registerMemory(void* p, size_t bytes, std::unique_ptr<RdmaRegion>* out) {
  if (bytes == 0)
    return Status::InvalidArgument("verbs: registering 0 bytes at " +
                                   std::to_string(reinterpret_cast<uintptr_t>(p)) + " on " +
                                   describe() + " (a region needs at least one byte)");
  int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  ibv_mr* mr = lib_.regMr(pd_, p, bytes, access);
  if (!mr) {
    int err = errno;
    return Status::SystemError(
        "verbs: ibv_reg_mr of " + std::to_string(bytes) + " bytes on " + describe() +
        " failed: " + strerror(err) +
        (err == ENOMEM || err == EPERM || err == EAGAIN
             ? "; raise the locked-memory limit (ulimit -l unlimited, or LimitMEMLOCK in systemd)"
         : err == EFAULT ? "; the range is not mapped memory of this process"
                         : ""));
  }
  *out = std::make_unique<VerbsRegion>(lib_, mr);
  return Status::Ok();
}

}  // namespace chorus
#endif
