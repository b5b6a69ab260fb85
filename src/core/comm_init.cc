// Communicator set-up: bootstrap, host discovery, transports, executor.
#include <sched.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

#include "bootstrap/env_init.h"
#include "common/log.h"
#include "core/comm_impl.h"

namespace chorus {

namespace {

// What every rank tells the others about itself at start-up.
struct PeerInfo {
  char host[200];
  int32_t pid;
  uint32_t shmSlotBytes;
  uint32_t shmSlots;
};

std::string defaultHostId() {
  char host[128] = {};
  gethostname(host, sizeof host - 1);
  std::string boot;
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::getline(f, boot);
  return std::string(host) + ":" + boot;
}

int usableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return int(sysconf(_SC_NPROCESSORS_ONLN));
}

}  // namespace

Status Communicator::Impl::init(const UniqueId& id, int r, int n, const Config& cfg) {
  rank = r;
  size = n;
  config = cfg;
  Deadline deadline = Deadline::after(config.timeoutSec);
  CHORUS_RETURN_IF_ERROR(Bootstrap::connect(id, rank, size, deadline, &bootstrap));

  std::vector<int> hostOf;
  bool oversubscribed = false;
  CHORUS_RETURN_IF_ERROR(discoverHosts(&hostOf, &oversubscribed));
  for (int q = 0; q < size; ++q)
    if (hostOf[q] != hostOf[rank])
      return Status::Unsupported(
          "rank " + std::to_string(rank) + " and rank " + std::to_string(q) +
          " are on different hosts, and this build of Chorus only has the shared-memory "
          "transport: run all ranks on one host (or set CHORUS_HOSTID to the same value on "
          "every rank if they really share one)");

  ShmOptions shmOpts{config.shmSlotBytes, config.shmSlots};
  CHORUS_RETURN_IF_ERROR(ShmTransport::create(bootstrap.get(), hostOf, shmOpts, deadline, &shm));

  ExecEnv env;
  env.rank = rank;
  env.conns.assign(size, nullptr);
  for (int q = 0; q < size; ++q) env.conns[q] = shm->connection(q);
  env.sleeper = shm.get();
  env.reducer = &CpuReducer::get();
  env.failed = &failed;
  env.failure = [this] { return currentError(); };
  env.peerLeft = [this](int peer) { return bootstrap->hasLeft(peer); };
  env.spinNs = config.spinNs;
  env.yieldWhileSpinning = oversubscribed;
  executor = std::make_unique<Executor>(std::move(env));

  // From here on a dead peer or a remote error poisons this communicator.
  bootstrap->setFailureHandler([this](const Status& st) { fail(st); });
  LOG_INFO(kLogInit, "rank %d of %d ready (shm, %s reducer%s)", rank, size,
           CpuReducer::get().isa(), oversubscribed ? ", oversubscribed: yielding" : "");
  return Status::Ok();
}

Status Communicator::Impl::discoverHosts(std::vector<int>* hostOf, bool* oversubscribed) {
  PeerInfo me{};
  std::string host = config.hostId.empty() ? defaultHostId() : config.hostId;
  snprintf(me.host, sizeof me.host, "%s", host.c_str());
  me.pid = getpid();
  me.shmSlotBytes = uint32_t(config.shmSlotBytes);
  me.shmSlots = uint32_t(config.shmSlots);
  std::vector<PeerInfo> all(size);
  CHORUS_RETURN_IF_ERROR(bootstrap->allgather(&me, sizeof me, all.data(),
                                              Deadline::after(config.timeoutSec)));
  hostOf->assign(size, -1);
  for (int q = 0; q < size; ++q) {
    if (all[q].shmSlotBytes != me.shmSlotBytes || all[q].shmSlots != me.shmSlots)
      return Status::InvalidArgument(
          "configuration differs between ranks: rank " + std::to_string(q) + " uses " +
          std::to_string(all[q].shmSlots) + " shm slots of " + std::to_string(all[q].shmSlotBytes) +
          " bytes, rank " + std::to_string(rank) + " uses " + std::to_string(me.shmSlots) +
          " of " + std::to_string(me.shmSlotBytes) +
          "; set CHORUS_SHM_SLOTS and CHORUS_SHM_SLOT_BYTES alike on every rank");
    for (int p = 0; p <= q; ++p) {
      if (strncmp(all[p].host, all[q].host, sizeof me.host) == 0) {
        (*hostOf)[q] = p;
        break;
      }
    }
  }
  int localSize = 0;
  for (int q = 0; q < size; ++q) localSize += (*hostOf)[q] == (*hostOf)[rank];
  *oversubscribed = localSize > usableCpus();
  return Status::Ok();
}

Communicator::Impl::~Impl() {
  // The bootstrap's service thread may call fail(), which touches the transport: stop it first.
  bootstrap.reset();
  executor.reset();
  shm.reset();
}

Communicator::Communicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Communicator::~Communicator() = default;

Status Communicator::create(const UniqueId& id, int rank, int size, const Config& config,
                            std::unique_ptr<Communicator>* out) {
  if (!out) return Status::InvalidArgument("Communicator::create: out is null");
  if (size < 1) return Status::InvalidArgument("Communicator::create: size must be >= 1");
  if (rank < 0 || rank >= size)
    return Status::InvalidArgument("Communicator::create: rank " + std::to_string(rank) +
                                   " is outside [0, " + std::to_string(size) + ")");
  CHORUS_RETURN_IF_ERROR(config.validate());
  auto impl = std::make_unique<Impl>();
  Status st = impl->init(id, rank, size, config);
  if (!st.ok()) return st.withContext("rank " + std::to_string(rank) + ": init");
  out->reset(new Communicator(std::move(impl)));
  return Status::Ok();
}

Status Communicator::createFromEnvironment(const Config& config,
                                           std::unique_ptr<Communicator>* out) {
  LaunchInfo info;
  CHORUS_RETURN_IF_ERROR(launchInfoFromEnvironment(config.timeoutSec, &info));
  return create(info.id, info.rank, info.size, config, out);
}

}  // namespace chorus
