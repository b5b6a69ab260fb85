// The libfabric provider: reliable datagram endpoints (FI_EP_RDM) with FI_RMA and remote CQ
// data, one endpoint per lane, all bound to one completion queue.
//
// Providers differ in what they demand; this one accepts local registration (FI_MR_LOCAL),
// virtual or offset addressing, provider keys, and receives consumed by remote CQ data
// (FI_RX_CQ_DATA: zero-byte receives are kept posted). It does not offer FI_CONTEXT or
// FI_MR_ENDPOINT, so providers that require those are passed over, and the error says so.
#include "transport/rdma/ofi_nic.h"

#if defined(CHORUS_HAVE_LIBFABRIC)
#include <arpa/inet.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "common/log.h"
#include "common/socket.h"
#include "transport/rails.h"
#include "transport/rdma/ofi_library.h"

namespace chorus {

namespace {

// Providers that run over ordinary sockets: used only when forced, and bound to the interface
// CHORUS_SOCKET_IFNAME picks (the TCP transport serves such networks better).
bool softwareProvider(const char* name) {
  static const char* const kSoftware[] = {"tcp", "sockets", "udp", "shm", "sm2", "net", "xnet"};
  std::string all(name ? name : "");
  size_t start = 0;
  while (start <= all.size()) {
    size_t end = all.find(';', start);
    if (end == std::string::npos) end = all.size();
    const std::string part = all.substr(start, end - start);
    for (const char* s : kSoftware)
      if (part == s) return true;
    start = end + 1;
  }
  return false;
}

constexpr uint32_t kMagic = 0x4f464931;  // "OFI1"
constexpr size_t kMaxAddrBytes = 64;

// What a rank publishes: the provider it uses and each lane's endpoint name.
struct Description {
  uint32_t magic;
  uint32_t lanes;
  uint32_t addrBytes;
  char provider[44];
  uint8_t addrs[16][kMaxAddrBytes];
};

}  // namespace

OfiNic::~OfiNic() {
  disconnect(false);
  if (cq_) fi_close(&cq_->fid);
  if (av_) fi_close(&av_->fid);
  if (domain_) fi_close(&domain_->fid);
  if (fabric_) fi_close(&fabric_->fid);
  if (info_) lib_->freeinfo(info_);
}

void OfiNic::disconnect(bool broken) {
  // libfabric 1.17's ofi_rxm can crash in fi_close on an endpoint with a connection to a
  // cut-off peer (it flushes a cancelled completion that has no context). Such an endpoint,
  // and the objects under it, are left open for the rest of the process: a failed
  // communicator costs a few sockets rather than the process.
  if (broken && !eps_.empty() && strstr(info_->fabric_attr->prov_name, "ofi_rxm")) {
    LOG_INFO(kLogNet, "%s: the communicator failed; its endpoints stay open until exit",
             describe().c_str());
    static std::mutex mutex;
    static auto* parked = new std::vector<void*>();  // keeps them reachable until exit
    std::lock_guard<std::mutex> lock(mutex);
    for (fid_ep* ep : eps_) parked->push_back(ep);
    for (void* object : {static_cast<void*>(cq_), static_cast<void*>(av_),
                         static_cast<void*>(domain_), static_cast<void*>(fabric_)})
      parked->push_back(object);
    eps_.clear();
    cq_ = nullptr;
    av_ = nullptr;
    domain_ = nullptr;
    fabric_ = nullptr;
    return;
  }
  for (fid_ep*& ep : eps_) {
    if (ep) fi_close(&ep->fid);
    ep = nullptr;
  }
}

std::string OfiNic::describe() const {
  return "libfabric " + std::string(info_->fabric_attr->prov_name) + " on " +
         std::string(info_->domain_attr->name ? info_->domain_attr->name : "?");
}

bool OfiNic::softwareOnly() const {
  return softwareProvider(info_->fabric_attr->prov_name);
}

int OfiNic::maxGather() const {
  size_t n = info_->tx_attr->iov_limit;
  return int(n > 16 ? 16 : n);
}

Status OfiNic::fail(const char* call, int ret) const {
  return Status::SystemError("libfabric " +
                             std::string(info_ ? info_->fabric_attr->prov_name : "") + ": " +
                             lib_->describe(call, ret));
}

Status OfiNic::open(const RdmaNicOptions& o) {
  std::string why;
  lib_ = OfiLibrary::get(&why);
  if (!lib_) return Status::Unsupported(why);

  fi_info* hints = lib_->dupinfo(nullptr);
  hints->caps = FI_RMA | FI_WRITE | FI_REMOTE_WRITE;
  hints->mode = FI_RX_CQ_DATA;
  hints->ep_attr->type = FI_EP_RDM;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->domain_attr->threading = FI_THREAD_SAFE;
  if (!o.ofiProvider.empty()) hints->fabric_attr->prov_name = strdup(o.ofiProvider.c_str());

  // IP providers bind to the interface CHORUS_SOCKET_IFNAME picks for this rank (its rail),
  // like the TCP transport.
  std::string node;
  if (o.loopbackOk && o.ifname.empty()) {
    node = "127.0.0.1";
  } else {
    NetInterface rail;
    std::vector<std::string> rails;
    if (findRailInterface(o.ifname, AF_INET, o.localIndex, &rail, &rails).ok()) {
      node = rail.addr.toString();
      node = node.substr(0, node.rfind(':'));
    }
  }

  fi_info* all = nullptr;
  int ret = lib_->getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &all);
  std::string seen;
  for (fi_info* i = ret == 0 ? all : nullptr; i; i = i->next) {
    const char* prov = i->fabric_attr->prov_name;
    if (!seen.empty()) seen += ", ";
    seen += prov;
    if (i->domain_attr->cq_data_size < 4) continue;
    if (softwareProvider(prov) && !o.ofiSoftwareOk) continue;
    if (softwareProvider(prov)) {
      // The same provider again, bound to the chosen address.
      fi_info* bound = nullptr;
      fi_info* h = lib_->dupinfo(hints);
      free(h->fabric_attr->prov_name);
      h->fabric_attr->prov_name = strdup(prov);
      int r = node.empty()
                  ? -FI_ENODATA
                  : lib_->getinfo(FI_VERSION(1, 9), node.c_str(), nullptr, FI_SOURCE, h, &bound);
      lib_->freeinfo(h);
      if (r != 0 || !bound) continue;
      info_ = lib_->dupinfo(bound);
      lib_->freeinfo(bound);
    } else {
      info_ = lib_->dupinfo(i);
    }
    break;
  }
  if (all) lib_->freeinfo(all);
  lib_->freeinfo(hints);
  if (!info_) {
    std::string what = ret != 0 ? lib_->describe("fi_getinfo", ret)
                                : "providers with FI_RMA on reliable datagram endpoints: " +
                                      (seen.empty() ? std::string("none") : seen);
    return Status::Unsupported(
        "libfabric offers no usable provider (" + what + ")" +
        (o.ofiSoftwareOk ? "" : "; tcp and sockets count only with CHORUS_NET=ofi") +
        (o.ofiProvider.empty() ? "" : "; CHORUS_OFI_PROVIDER=" + o.ofiProvider));
  }

  if ((ret = lib_->fabric(info_->fabric_attr, &fabric_, nullptr))) return fail("fi_fabric", ret);
  if ((ret = fi_domain(fabric_, info_, &domain_, nullptr))) return fail("fi_domain", ret);
  fi_av_attr av{};
  av.type = FI_AV_TABLE;
  if ((ret = fi_av_open(domain_, &av, &av_, nullptr))) return fail("fi_av_open", ret);
  fi_cq_attr cq{};
  cq.format = FI_CQ_FORMAT_DATA;
  cq.wait_obj = FI_WAIT_UNSPEC;
  cq.size = 4096;
  if (fi_cq_open(domain_, &cq, &cq_, nullptr)) {
    cq.wait_obj = FI_WAIT_NONE;  // no wait object: the progress thread naps instead
    canSleep_ = false;
    if ((ret = fi_cq_open(domain_, &cq, &cq_, nullptr))) return fail("fi_cq_open", ret);
  }
  rxCqData_ = (info_->mode & FI_RX_CQ_DATA) != 0;
  return Status::Ok();
}

Status OfiNic::registerMemory(void* p, size_t bytes, std::unique_ptr<RdmaRegion>* out) {
  const uint64_t access = FI_WRITE | FI_REMOTE_WRITE | FI_READ | FI_REMOTE_READ;
  fid_mr* mr = nullptr;
  const uint64_t key = nextKey_.fetch_add(1);
  int ret = fi_mr_reg(domain_, p, bytes, access, 0, key, 0, &mr, nullptr);
  if (ret)
    return fail("fi_mr_reg", ret).withContext("registering " + std::to_string(bytes) + " bytes");
  const bool virtualAddresses = (info_->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
  out->reset(new OfiRegion(mr, static_cast<const char*>(p), virtualAddresses));
  return Status::Ok();
}

uint64_t OfiRegion::key() const {
  return fi_mr_key(mr_);
}
void* OfiRegion::desc() const {
  return fi_mr_desc(mr_);
}
OfiRegion::~OfiRegion() {
  fi_close(&mr_->fid);
}

Status OfiNic::prepare(int rank, int size, const std::vector<int>& peers, int lanes,
                       std::vector<uint8_t>* description) {
  (void)rank, (void)peers;
  if (lanes > 16) return Status::InvalidArgument("libfabric: at most 16 lanes");
  lanes_ = lanes;
  addrs_.assign(size_t(size) * size_t(lanes), FI_ADDR_NOTAVAIL);
  Description d{};
  d.magic = kMagic;
  d.lanes = uint32_t(lanes);
  snprintf(d.provider, sizeof d.provider, "%s", info_->fabric_attr->prov_name);
  for (int l = 0; l < lanes; ++l) {
    fid_ep* ep = nullptr;
    int ret = fi_endpoint(domain_, info_, &ep, nullptr);
    if (ret) return fail("fi_endpoint", ret);
    eps_.push_back(ep);
    if ((ret = fi_ep_bind(ep, &av_->fid, 0))) return fail("fi_ep_bind(av)", ret);
    if ((ret = fi_ep_bind(ep, &cq_->fid, FI_TRANSMIT | FI_RECV)))
      return fail("fi_ep_bind(cq)", ret);
    if ((ret = fi_enable(ep))) return fail("fi_enable", ret);
    size_t len = kMaxAddrBytes;
    if ((ret = fi_getname(&ep->fid, d.addrs[l], &len))) return fail("fi_getname", ret);
    d.addrBytes = uint32_t(len);
    if (rxCqData_)
      for (int k = 0; k < kPostedReceives; ++k) CHORUS_RETURN_IF_ERROR(postReceive(l));
  }
  description->assign(reinterpret_cast<uint8_t*>(&d), reinterpret_cast<uint8_t*>(&d) + sizeof d);
  return Status::Ok();
}

Status OfiNic::connect(int peer, const uint8_t* description, size_t bytes) {
  Description d;
  if (bytes < sizeof d)
    return Status::RemoteError("libfabric: rank " + std::to_string(peer) +
                               " sent a truncated endpoint description");
  memcpy(&d, description, sizeof d);
  d.provider[sizeof d.provider - 1] = 0;
  if (d.magic != kMagic || d.addrBytes > kMaxAddrBytes)
    return Status::RemoteError("libfabric: rank " + std::to_string(peer) +
                               " sent a malformed endpoint description");
  if (strcmp(d.provider, info_->fabric_attr->prov_name) != 0)
    return Status::InvalidArgument("libfabric: rank " + std::to_string(peer) + " uses provider " +
                                   d.provider + " and this rank " + info_->fabric_attr->prov_name +
                                   "; set CHORUS_OFI_PROVIDER alike on every rank");
  if (int(d.lanes) != lanes_)
    return Status::InvalidArgument("libfabric: rank " + std::to_string(peer) + " has " +
                                   std::to_string(d.lanes) + " lanes, this rank " +
                                   std::to_string(lanes_) + "; set CHORUS_RDMA_LANES alike");
  for (int l = 0; l < lanes_; ++l) {
    fi_addr_t a = FI_ADDR_NOTAVAIL;
    int n = fi_av_insert(av_, d.addrs[l], 1, &a, 0, nullptr);
    if (n != 1)
      return fail("fi_av_insert", n < 0 ? n : -FI_EINVAL)
          .withContext("rank " + std::to_string(peer));
    addrs_[size_t(peer) * size_t(lanes_) + size_t(l)] = a;
  }
  return Status::Ok();
}

Status OfiNic::postReceive(int lane) {
  void* ctx = reinterpret_cast<void*>(uintptr_t(kReceiveTag | uint64_t(lane)));
  for (;;) {
    ssize_t ret = fi_recv(eps_[size_t(lane)], nullptr, 0, nullptr, FI_ADDR_UNSPEC, ctx);
    if (ret == 0) return Status::Ok();
    if (ret != -FI_EAGAIN) return fail("fi_recv", int(ret));
    fi_cq_data_entry e[8];
    ssize_t n = fi_cq_read(cq_, e, 8);  // progress; keep what came for poll()
    for (ssize_t k = 0; k < n; ++k) ready_.push_back(e[k]);
  }
}

PostResult OfiNic::write(int peer, int lane, const RdmaGather* gather, int n, RdmaTarget target,
                         uint32_t imm, void* context, std::string* error) {
  iovec iov[16];
  void* desc[16];
  size_t total = 0;
  for (int k = 0; k < n; ++k) {
    iov[k].iov_base = const_cast<void*>(gather[k].addr);
    iov[k].iov_len = gather[k].bytes;
    desc[k] = gather[k].desc;
    total += gather[k].bytes;
  }
  fi_rma_iov rma{target.addr, total, target.key};
  fi_msg_rma msg{};
  msg.msg_iov = iov;
  msg.desc = desc;
  msg.iov_count = size_t(n);
  msg.addr = addrs_[size_t(peer) * size_t(lanes_) + size_t(lane)];
  msg.rma_iov = &rma;
  msg.rma_iov_count = 1;
  msg.context = context;
  msg.data = imm;
  ssize_t ret = fi_writemsg(eps_[size_t(lane)], &msg, FI_REMOTE_CQ_DATA | FI_COMPLETION);
  if (ret == 0) return PostResult::kPosted;
  if (ret == -FI_EAGAIN) return PostResult::kBusy;
  *error = describe() + ": " + lib_->describe("fi_writemsg", int(ret)) + " to rank " +
           std::to_string(peer);
  return PostResult::kFailed;
}

int OfiNic::poll(RdmaEvent* events, int max) {
  int got = 0;
  auto take = [&](const fi_cq_data_entry& e) {
    const uintptr_t ctx = reinterpret_cast<uintptr_t>(e.op_context);
    // A peer's write with data lands as a remote write (or, where FI_RX_CQ_DATA, a receive);
    // the completion of this rank's own write may echo FI_REMOTE_CQ_DATA too.
    const bool landed = (e.flags & FI_REMOTE_CQ_DATA) && (e.flags & (FI_REMOTE_WRITE | FI_RECV));
    if (landed) {
      events[got].kind = RdmaEvent::kArrived;
      events[got].imm = uint32_t(e.data);
      ++got;
      if (rxCqData_ && (ctx & kReceiveTag)) (void)postReceive(int(ctx & 0xff));
    } else if (!(ctx & kReceiveTag)) {
      events[got].kind = RdmaEvent::kWritten;
      events[got].context = e.op_context;
      ++got;
    }
  };
  while (got < max && !ready_.empty()) {
    take(ready_.front());
    ready_.pop_front();
  }
  while (got < max) {
    fi_cq_data_entry e[16];
    const int want = max - got < 16 ? max - got : 16;
    ssize_t n = fi_cq_read(cq_, e, size_t(want));
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      if (fi_cq_readerr(cq_, &err, 0) == 1) {
        events[got].kind = RdmaEvent::kFailed;
        events[got].context = err.op_context;
        events[got].error =
            describe() + ": a write failed: " + lib_->strerror(err.err) +
            " (provider: " + fi_cq_strerror(cq_, err.prov_errno, err.err_data, nullptr, 0) + ")";
        ++got;
      }
      continue;
    }
    if (n <= 0) break;
    for (ssize_t k = 0; k < n; ++k) take(e[k]);
  }
  return got;
}

void OfiNic::waitForEvents(int timeoutMs) {
  if (!ready_.empty()) return;
  if (!canSleep_) {
    usleep(50);
    return;
  }
  fi_cq_data_entry e[16];
  ssize_t n = fi_cq_sread(cq_, e, 16, nullptr, timeoutMs);
  for (ssize_t k = 0; k < n; ++k) ready_.push_back(e[k]);
}

void OfiNic::interruptWait() {
  if (canSleep_) fi_cq_signal(cq_);
}

Status openOfiNic(const RdmaNicOptions& options, std::unique_ptr<RdmaNic>* out) {
  std::unique_ptr<OfiNic> nic(new OfiNic);
  CHORUS_RETURN_IF_ERROR(nic->open(options));
  LOG_INFO(kLogNet, "libfabric: opened %s", nic->describe().c_str());
  *out = std::move(nic);
  return Status::Ok();
}

}  // namespace chorus

#else  // built without libfabric's headers

namespace chorus {
Status openOfiNic(const RdmaNicOptions&, std::unique_ptr<RdmaNic>*) {
  return Status::Unsupported(
      "this build of Chorus has no libfabric support (rdma/fabric.h was missing when it was "
      "built: install libfabric-dev and rebuild); use CHORUS_NET=socket");
}
}  // namespace chorus

#endif
