// Communicator set-up: bootstrap, host discovery, transports, executor.
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "bootstrap/env_init.h"
#include "common/log.h"
#include "core/comm_impl.h"
#include "core/mixed_sleeper.h"
#include "core/transport_plan.h"
#include "topo/job.h"
#include "topo/probe.h"

namespace chorus {

namespace {

// What every rank tells the others about itself at start-up.
struct PeerInfo {
  char host[200];
  int32_t pid;
  uint32_t shmSlotBytes;
  uint32_t shmSlots;
  uint32_t tcpChunkBytes;
  uint32_t tcpStreams;
  uint8_t forceTcp;  // CHORUS_TRANSPORT=tcp: TCP between every pair, even on one host
};

std::string tcpSettings(const PeerInfo& p) {
  return "CHORUS_TCP_CHUNK_BYTES=" + std::to_string(p.tcpChunkBytes) +
         " CHORUS_SOCKET_NSTREAMS=" + std::to_string(p.tcpStreams) +
         " CHORUS_TRANSPORT=" + (p.forceTcp ? "tcp" : "auto");
}

// Host grouping and the settings that must agree across ranks, in one exchange. (A free
// function, so comm_impl.h needs no TCP types; Impl::discoverHosts is no longer used.)
Status exchangePeerInfo(Communicator::Impl& c, const TcpOptions& tcp, bool forceTcp,
                        std::vector<int>* hostOf) {
  const Config& config = c.config;
  const int rank = c.rank, size = c.size;
  PeerInfo me{};
  std::string host = config.hostId.empty() ? topo::defaultHostId() : config.hostId;
  snprintf(me.host, sizeof me.host, "%s", host.c_str());
  me.pid = getpid();
  me.shmSlotBytes = uint32_t(config.shmSlotBytes);
  me.shmSlots = uint32_t(config.shmSlots);
  me.tcpChunkBytes = uint32_t(tcp.chunkBytes);
  me.tcpStreams = uint32_t(tcp.nstreams);
  me.forceTcp = forceTcp;
  std::vector<PeerInfo> all(size);
  CHORUS_RETURN_IF_ERROR(
      c.bootstrap->allgather(&me, sizeof me, all.data(), Deadline::after(config.timeoutSec)));
  hostOf->assign(size, -1);
  for (int q = 0; q < size; ++q) {
    if (all[q].shmSlotBytes != me.shmSlotBytes || all[q].shmSlots != me.shmSlots)
      return Status::InvalidArgument(
          "configuration differs between ranks: rank " + std::to_string(q) + " uses " +
          std::to_string(all[q].shmSlots) + " shm slots of " + std::to_string(all[q].shmSlotBytes) +
          " bytes, rank " + std::to_string(rank) + " uses " + std::to_string(me.shmSlots) + " of " +
          std::to_string(me.shmSlotBytes) +
          "; set CHORUS_SHM_SLOTS and CHORUS_SHM_SLOT_BYTES alike on every rank");
    if (all[q].tcpChunkBytes != me.tcpChunkBytes || all[q].tcpStreams != me.tcpStreams ||
        all[q].forceTcp != me.forceTcp)
      return Status::InvalidArgument("configuration differs between ranks: rank " +
                                     std::to_string(q) + " has " + tcpSettings(all[q]) + ", rank " +
                                     std::to_string(rank) + " has " + tcpSettings(me) +
                                     "; set these alike on every rank");
    for (int p = 0; p <= q; ++p) {
      if (strncmp(all[p].host, all[q].host, sizeof me.host) == 0) {
        (*hostOf)[q] = p;
        break;
      }
    }
  }
  return Status::Ok();
}

}  // namespace

// Rank 0 reads the tuning file and hands its text to everyone, so that every rank predicts
// with the same numbers and therefore picks the same algorithms.
Status Communicator::Impl::loadTuning(Deadline deadline) {
  if (config.tuneFile.empty()) return Status::Ok();
  constexpr uint64_t kUnreadable = ~uint64_t(0);
  std::string text;
  uint64_t len = 0;
  if (rank == 0) {
    std::ifstream f(config.tuneFile);
    std::stringstream buf;
    buf << f.rdbuf();
    text = buf.str();
    len = f ? text.size() : kUnreadable;
  }
  CHORUS_RETURN_IF_ERROR(bootstrap->broadcast(&len, sizeof len, 0, deadline));
  if (len == kUnreadable)
    return Status::InvalidArgument(
        "rank 0 cannot read the tuning file '" + config.tuneFile +
        "' (CHORUS_TUNE_FILE); its format is in docs/topology.md (estimates lines)");
  text.resize(len);
  if (len) CHORUS_RETURN_IF_ERROR(bootstrap->broadcast(text.data(), len, 0, deadline));
  CHORUS_RETURN_IF_ERROR(topo::applyEstimates(text, config.tuneFile, &topology));
  LOG_INFO(kLogTune, "rank %d: tuning from %s", rank, config.tuneFile.c_str());
  return Status::Ok();
}

Status Communicator::Impl::init(const UniqueId& id, int r, int n, const Config& cfg) {
  rank = r;
  size = n;
  config = cfg;
  Deadline deadline = Deadline::after(config.timeoutSec);
  CHORUS_RETURN_IF_ERROR(Bootstrap::connect(id, rank, size, deadline, &bootstrap));

  // The job's topology feeds algorithm choice only; which transport reaches a peer follows the
  // real host identities below, since a topology file may describe a simulated machine.
  topo::JobTopologyOptions topoOpts;
  topoOpts.topoFile = config.topoFile;
  topoOpts.dumpFile = config.topoDumpFile;
  topoOpts.hostId = config.hostId;
  CHORUS_RETURN_IF_ERROR(topo::buildJobTopology(
      rank, size, topoOpts,
      [&](const void* mine, size_t bytes, void* all) {
        return bootstrap->allgather(mine, bytes, all, deadline);
      },
      &topology));
  CHORUS_RETURN_IF_ERROR(loadTuning(deadline));
  layout = layoutFromTopology(topology, size);
  CHORUS_RETURN_IF_ERROR(AlgoOverride::parse(config.algo, &algoOverride));

  std::vector<int> hostOf;
  TcpOptions tcpOpts;
  tcpOpts.timeoutSec = config.timeoutSec;
  CHORUS_RETURN_IF_ERROR(TcpOptions::fromEnvironment(&tcpOpts));
  bool forceTcp = false;
  CHORUS_RETURN_IF_ERROR(transportMode(&forceTcp));
  CHORUS_RETURN_IF_ERROR(exchangePeerInfo(*this, tcpOpts, forceTcp, &hostOf));
  TransportPlan tp = planTransports(hostOf, rank, forceTcp, config.shmSlotBytes, tcpOpts);

  costParams.chunkBytes = tp.payload;
  costParams.windowChunks = config.shmSlots;
  ShmOptions shmOpts{config.shmSlotBytes, config.shmSlots};
  CHORUS_RETURN_IF_ERROR(
      ShmTransport::create(bootstrap.get(), tp.shmHostOf, shmOpts, deadline, &shm));
  net = std::make_unique<NetTransports>();
  if (tp.tcpUsed) {
    tcpOpts.chunkBytes = tp.payload;
    TcpHooks hooks;
    hooks.onError = [this](const Status& st) { failAfterRootCauseGrace(st); };
    if (tp.shmActive) hooks.wakeExecutor = [this] { shm->wake(); };
    hooks.failed = &failed;
    CHORUS_RETURN_IF_ERROR(TcpTransport::create(bootstrap.get(), tp.tcpPeer, tp.oneHost, tcpOpts,
                                                std::move(hooks), deadline, &net->tcp));
    net->sleeper =
        std::make_unique<MixedSleeper>(shm.get(), net->tcp.get(), tp.payload, tp.shmActive);
  }

  ExecEnv env;
  env.rank = rank;
  env.conns.assign(size, nullptr);
  Transport* waitOn = net->sleeper ? static_cast<Transport*>(net->sleeper.get()) : shm.get();
  for (int q = 0; q < size; ++q) env.conns[q] = waitOn->connection(q);
  env.sleeper = waitOn;
  env.failed = &failed;
  env.failure = [this] { return currentError(); };
  // Over TCP a peer's last data may still be on the wire, or unread in our ring, when its
  // bootstrap goodbye lands: it has only left once its streams said goodbye too (after their
  // last byte) and we consumed all it sent.
  env.peerLeft = [this, tcp = net->tcp.get()](int peer) {
    return bootstrap->hasLeft(peer) && (!tcp || tcp->peerFinished(peer));
  };
  env.spinNs = config.spinNs;
  executor = std::make_unique<Executor>(std::move(env));
  sleeper.store(waitOn);

  // From here on a dead peer or a remote error poisons this communicator.
  bootstrap->setFailureHandler([this](const Status& st) {
    failureIsKnown.store(true);  // before fail(): failedRun must not echo it back
    fail(st);
  });
  LOG_INFO(kLogInit, "rank %d of %d ready (%s, %zu-byte chunks, %s host engine)", rank, size,
           waitOn->name(), tp.payload, engineFor(MemoryKind::Host)->name());
  return Status::Ok();
}

Communicator::Impl::~Impl() {
  // The bootstrap's service thread may call fail(), which touches the transport: stop it first.
  bootstrap.reset();
  executor.reset();
  sleeper.store(nullptr);
  net.reset();  // TCP drains and may ring shm's doorbell: before shm goes
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
