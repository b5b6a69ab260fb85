// Joining a job with Gloo: rank and size from the launcher's variables (the same ones Chorus
// reads), rendezvous through a Gloo FileStore in a private directory named after the job, and
// full-mesh TCP pairs. The store's files are removed once every rank is connected.
#include <gloo/barrier.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "backend_gloo.h"
#include "common/fnv1a.h"

namespace chorus::bench {

namespace {

constexpr uint64_t kP2pSlot = 0x43484f52;  // "CHOR": any fixed slot; batches never overlap
constexpr auto kTimeout = std::chrono::seconds(300);

bool envInt(const char* name, int* out) {
  const char* v = getenv(name);
  if (!v || !*v) return false;
  char* end = nullptr;
  long x = strtol(v, &end, 10);
  if (*end || x < 0) return false;
  *out = int(x);
  return true;
}

// The first launcher whose variables are set wins, in the order Chorus's bootstrap uses.
Status rankAndSize(int* rank, int* size) {
  const char* vars[][2] = {{"CHORUS_RANK", "CHORUS_WORLD_SIZE"},
                           {"RANK", "WORLD_SIZE"},
                           {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                           {"SLURM_PROCID", "SLURM_NTASKS"}};
  for (auto& v : vars)
    if (envInt(v[0], rank) && envInt(v[1], size) && *rank < *size) return Status::Ok();
  return Status::InvalidArgument(
      "--impl gloo: no rank in the environment; start it with chorus-run, mpirun or srun "
      "(or set CHORUS_RANK and CHORUS_WORLD_SIZE)");
}

// Something every rank of this job, and no other job, sees: hashed, so the secret that
// chorus-run hands out is not written into a path name.
Status jobKey(std::string* out) {
  std::string job;
  for (const char* v :
       {"CHORUS_SECRET", "CHORUS_COMM_ID", "TORCHELASTIC_RUN_ID", "MASTER_ADDR", "MASTER_PORT",
        "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "SLURM_JOB_ID", "SLURM_STEP_ID"})
    if (const char* x = getenv(v)) job += std::string(v) + "=" + x + ";";
  if (job.empty())
    return Status::InvalidArgument(
        "--impl gloo: no job id in the environment to name the "
        "rendezvous directory (CHORUS_COMM_ID, SLURM_JOB_ID, ...)");
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)fnv1a(job));
  *out = hex;
  return Status::Ok();
}

}  // namespace

Status GlooBackend::p2p(const P2pOp* ops, int n) {
  try {
    std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> bufs;
    bufs.reserve(size_t(n));
    for (int i = 0; i < n; ++i) {
      bufs.push_back(ctx_->createUnboundBuffer(ops[i].buf, ops[i].bytes));
      if (ops[i].send)
        bufs.back()->send(ops[i].peer, kP2pSlot);
      else
        bufs.back()->recv(ops[i].peer, kP2pSlot);
    }
    for (int i = 0; i < n; ++i) {
      if (ops[i].send)
        bufs[size_t(i)]->waitSend(kTimeout);
      else
        bufs[size_t(i)]->waitRecv(kTimeout);
    }
  } catch (const std::exception& e) {
    return Status::RemoteError(std::string("gloo send/recv: ") + e.what());
  }
  return Status::Ok();
}

Status GlooBackend::barrier() {
  try {
    gloo::BarrierOptions o(ctx_);
    gloo::barrier(o);
  } catch (const std::exception& e) {
    return Status::RemoteError(std::string("gloo barrier: ") + e.what());
  }
  return Status::Ok();
}

Status makeGlooBackend(const Options& o, std::unique_ptr<Backend>* out) {
  int rank = 0, size = 1;
  CHORUS_RETURN_IF_ERROR(rankAndSize(&rank, &size));
  std::string key;
  CHORUS_RETURN_IF_ERROR(jobKey(&key));
  const std::string dir = o.glooStore + "/chorus-bench-gloo-" + key;
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return Status::FromErrno(errno, "--impl gloo: cannot create the rendezvous directory " + dir +
                                        " (choose another with --gloo-store)");
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = o.glooHost;
    auto dev = gloo::transport::tcp::CreateDevice(attr);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
    ctx->setTimeout(kTimeout);
    gloo::rendezvous::FileStore store(dir);
    ctx->connectFullMesh(store, dev);
    auto b = std::make_unique<GlooBackend>(ctx, o.glooAlgo);
    // Everyone has read everyone's address once all reach the barrier: clean up then.
    CHORUS_RETURN_IF_ERROR(b->barrier());
    for (const std::string& f : store.getAllKeyFilePaths()) unlink(f.c_str());
    CHORUS_RETURN_IF_ERROR(b->barrier());
    if (rank == 0) rmdir(dir.c_str());
    *out = std::move(b);
  } catch (const std::exception& e) {
    return Status::RemoteError("--impl gloo: rendezvous through " + dir + " failed: " + e.what());
  }
  return Status::Ok();
}

}  // namespace chorus::bench
