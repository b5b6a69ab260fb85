// Communicator set-up: bootstrap, host discovery, transports, executor.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "bootstrap/auth.h"
#include "bootstrap/env_init.h"
#include "bootstrap/wire.h"
#include "common/env.h"
#include "common/log.h"
#include "core/comm_impl.h"
#include "engine/cuda_runtime.h"
#include "topo/job.h"
#include "topo/probe.h"

namespace chorus {

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

namespace {
// Names the communicator's dumps alike on every rank without revealing the secret.
std::string traceId(const uint8_t* secret) {
  const auth::Mac mac = auth::computeMac(secret, "chorus flight recorder id", {});
  char hex[13];
  for (int i = 0; i < 6; ++i) snprintf(hex + 2 * i, 3, "%02x", mac[size_t(i)]);
  return hex;
}
}  // namespace

Status Communicator::Impl::init(const UniqueId& id, int r, int n, const Config& cfg) {
  rank = r;
  size = n;
  config = cfg;
  cudaDevice = CudaRuntime::get().currentDevice();
  Deadline deadline = Deadline::after(config.timeoutSec);
  CHORUS_RETURN_IF_ERROR(Bootstrap::connect(id, rank, size, deadline, &bootstrap));
  Status st = initOverBootstrap(deadline);
  if (st.ok()) return st;
  st = rootCauseOf(st);
  // A failure this rank found itself is news to the ranks still setting up, which may be
  // waiting for this one (a connection it will now never open) and would otherwise learn only
  // that it left. A timeout is left out: it says only that this rank waited, and the ranks that
  // wait for it time out too.
  if (st.code() != StatusCode::Timeout && bootstrap->firstFailure().ok())
    bootstrap->reportError(st);
  return st;
}

// A set-up step that fails because a rank died or stopped names the peer it was talking to,
// which may only have given up because of that rank. The bootstrap hears of a death itself
// (the dead rank's connection closes at rank 0, which tells everyone), a moment later at most;
// a stopped rank is found by asking who still answers. Either names the rank at fault.
Status Communicator::Impl::rootCauseOf(const Status& st) {
  const StatusCode c = st.code();
  if (c != StatusCode::RemoteError && c != StatusCode::SystemError && c != StatusCode::Timeout)
    return st;  // this rank's own doing, or the job's configuration
  auto withCause = [&](const Status& cause) {
    return Status(cause.code(), cause.message() + "; set-up stopped at: " + st.message());
  };
  if (Status cause = bootstrap->firstFailure(); !cause.ok()) return withCause(cause);
  if (c == StatusCode::Timeout)
    if (Status silent = bootstrap->findUnresponsive(); !silent.ok()) return silent;
  const Deadline grace = Deadline::after(std::min(0.5, config.timeoutSec / 4));
  for (;;) {
    if (Status cause = bootstrap->firstFailure(); !cause.ok()) return withCause(cause);
    if (grace.expired()) return st;
    usleep(1000);
  }
}

Status Communicator::Impl::initOverBootstrap(Deadline deadline) {
  CHORUS_RETURN_IF_ERROR(bindOnly(bootstrap->localAddress(), &recoveryListener)
                             .withContext("rank " + std::to_string(rank) + ": recovery port"));

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

  ExecEnv env;
  env.rank = rank;
  CHORUS_RETURN_IF_ERROR(connectTransports(deadline, &env));
  env.doorbell = &doorbell;
  env.failed = &failed;
  env.failure = [this] { return failureToReport(); };
  // A peer has left once the bootstrap says so and its transport holds nothing more from it
  // (over TCP its last data may still be on the wire when the goodbye lands).
  env.peerLeft = [this, via = env.transportOf](int peer) {
    return bootstrap->hasLeft(peer) &&
           (!via[size_t(peer)] || via[size_t(peer)]->peerFinished(peer));
  };
  env.spinNs = config.spinNs;
  env.streamBytes = config.streamBytes;
  // Busy polls only while every local rank can have a core: oversubscribed, a rank that spins
  // holds back the peer it waits for (4 ranks on 2 cores: 8 B allreduce 25 us against 9).
  const size_t localRanks = layout.hosts[size_t(layout.hostOf[size_t(rank)])].size();
  if (localRanks > size_t(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)))) env.busyPolls = 0;
  env.readyNotices = config.checkCalls > 0;
  env.recorder = recorder.get();
  const size_t chunkBytes = env.chunkBytes;
  executor = std::make_unique<Executor>(std::move(env));

  // From here on a dead peer or a remote error poisons this communicator.
  bootstrap->setFailureHandler([this](const Status& st) {
    failureIsKnown.store(true);  // before fail(): failedRun must not echo it back
    fail(st);
  });
  dumpInfo.rank = rank;
  dumpInfo.size = size;
  dumpInfo.commId = traceId(bootstrap->secret());
  dumpInfo.host = boot::selfIdentity().host;
  dumpInfo.transports = transportNames;
  if (recorder->enabled())
    signalDumpHandle = registerFlightDump([this] { dumpFlightRecorder("SIGUSR1"); });
  LOG_INFO(kLogInit, "rank %d of %d ready (%s, %zu-byte chunks, %s host engine)", rank, size,
           transportNames.empty() ? "no peers" : transportNames.c_str(), chunkBytes,
           engineFor(MemoryKind::Host)->name());
  return Status::Ok();
}

namespace {
constexpr int64_t kDefaultTraceEntries = 2048;
}  // namespace

Communicator::Impl::Impl() {
  std::string error;
  int64_t entries = envInt("CHORUS_TRACE_BUFFER", &error).value_or(kDefaultTraceEntries);
  if (!error.empty() || entries < 0 || entries > (int64_t(1) << 24)) {
    LOG_WARN(kLogInit, "CHORUS_TRACE_BUFFER: %s; using %lld entries",
             error.empty() ? "out of range [0, 16777216]" : error.c_str(),
             (long long)kDefaultTraceEntries);
    entries = kDefaultTraceEntries;
  }
  recorder = std::make_unique<FlightRecorder>(size_t(entries));
}

void Communicator::Impl::dumpFlightRecorder(const std::string& reason) const {
  chorus::dumpFlightRecorder(*recorder, dumpInfo, reason);
}

Communicator::Impl::~Impl() {
  if (signalDumpHandle) unregisterFlightDump(signalDumpHandle);
  // The bootstrap's service thread may call fail(), which touches the transport: stop it first.
  bootstrap.reset();
  executor.reset();
  // Last made, first gone: TCP drains and may ring the doorbell that shm placed in its segment.
  while (!transports.empty()) transports.pop_back();
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
