#include "bootstrap/env_init.h"

#include <cstring>

#include "common/env.h"
#include "common/fnv1a.h"
#include "common/log.h"
#include "common/socket.h"

namespace chorus {
namespace {

struct Launcher {
  const char* name;
  const char* rank;
  const char* size;
  const char* localRank;
  const char* localSize;
};

constexpr Launcher kLaunchers[] = {
    {"chorus", "CHORUS_RANK", "CHORUS_WORLD_SIZE", "CHORUS_LOCAL_RANK", "CHORUS_LOCAL_SIZE"},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
};

// An integer variable in [lo, hi]; unset leaves *out alone and reports *present = false.
Status readInt(const char* name, int64_t lo, int64_t hi, int* out, bool* present) {
  std::string error;
  std::optional<int64_t> v = envInt(name, &error);
  if (!error.empty()) return Status::InvalidArgument(error);
  *present = v.has_value();
  if (!v) return Status::Ok();
  if (*v < lo || *v > hi)
    return Status::InvalidArgument(std::string(name) + "=" + std::to_string(*v) +
                                   " is out of range [" + std::to_string(lo) + ", " +
                                   std::to_string(hi) + "]");
  *out = int(*v);
  return Status::Ok();
}

Status readRanks(const Launcher& l, LaunchInfo* out) {
  bool has = false;
  CHORUS_RETURN_IF_ERROR(readInt(l.size, 1, 1 << 24, &out->size, &has));
  if (!has)
    return Status::InvalidArgument(std::string(l.rank) + " is set but " + l.size + " is not; the " +
                                   l.name + " launcher sets both");
  CHORUS_RETURN_IF_ERROR(readInt(l.rank, 0, out->size - 1, &out->rank, &has));
  bool hasLocalSize = false, hasLocalRank = false;
  CHORUS_RETURN_IF_ERROR(readInt(l.localSize, 1, out->size, &out->localSize, &hasLocalSize));
  int localMax = hasLocalSize ? out->localSize - 1 : out->size - 1;
  CHORUS_RETURN_IF_ERROR(readInt(l.localRank, 0, localMax, &out->localRank, &hasLocalRank));
  out->source = l.name;
  return Status::Ok();
}

Status readRootAddress(std::string* text, SockAddr* addr) {
  if (auto id = envString("CHORUS_COMM_ID")) {
    *text = *id;
    return parseHostPort(*id, addr).withContext("CHORUS_COMM_ID");
  }
  auto host = envString("MASTER_ADDR");
  auto port = envString("MASTER_PORT");
  if (!host || !port)
    return Status::InvalidArgument(
        "no bootstrap root address in the environment: set CHORUS_COMM_ID=host:port (IPv6 as "
        "[addr]:port), or MASTER_ADDR and MASTER_PORT, to an address of rank 0's host and a "
        "free port");
  std::string error;
  std::optional<int64_t> p = envInt("MASTER_PORT", &error);
  if (!error.empty()) return Status::InvalidArgument(error);
  if (*p < 1 || *p > 65535)
    return Status::InvalidArgument("MASTER_PORT=" + *port + " is not a port in [1, 65535]");
  *text = *host + ":" + *port;
  return resolveHost(*host, int(*p), addr).withContext("MASTER_ADDR");
}

// Without CHORUS_SECRET the secret is derived from what every rank sees (the root address, the
// launcher's job id), which anyone else who can see them can compute too. That is accepted on
// loopback, where only this host can connect, and elsewhere only when the user opts in.
// `weak`: derived without that opt-in, so the job's listeners must stay on loopback too.
Status readSecret(const std::string& rootText, const SockAddr& root, uint8_t* secret, bool* weak) {
  *weak = false;
  if (auto hex = envString("CHORUS_SECRET"))
    return parseSecretHex(*hex, secret).withContext("CHORUS_SECRET");
  std::string error;
  bool insecure = envInt("CHORUS_INSECURE", &error).value_or(0) != 0;
  if (!error.empty()) return Status::InvalidArgument(error);
  if (!root.isLoopback() && !insecure)
    return Status::InvalidArgument(
        "CHORUS_SECRET is not set and the bootstrap root " + rootText +
        " is not a loopback address: any program that can reach it and knows the job id "
        "could join the job. Give every rank the same secret, e.g. "
        "`export CHORUS_SECRET=$(openssl rand -hex 32)` before srun or torchrun, or "
        "`mpirun -x CHORUS_SECRET=$(openssl rand -hex 32) ...` (chorus-run sets one itself); or "
        "set CHORUS_INSECURE=1 to accept a secret derived from the address and the job id");
  std::string job;
  for (const char* v : {"TORCHELASTIC_RUN_ID", "OMPI_MCA_ess_base_jobid", "SLURM_JOB_ID"})
    if (auto x = envString(v)) job += std::string(v) + "=" + *x + ";";
  deriveJobSecret(rootText, job, secret);
  *weak = !insecure;
  if (insecure && !root.isLoopback())
    LOG_WARN(kLogBoot,
             "CHORUS_INSECURE=1: the job secret is derived from the root address%s, which anyone "
             "who can reach %s can compute; set CHORUS_SECRET (64 hex digits) instead",
             job.empty() ? " alone" : " and the job id", rootText.c_str());
  else
    LOG_INFO(kLogBoot,
             "job secret derived from the root address%s (loopback only); set CHORUS_SECRET "
             "(64 hex digits, the same on every rank) for one that others cannot compute",
             job.empty() ? " alone (no job id variable set)" : " and the job id");
  return Status::Ok();
}

}  // namespace

Status parseSecretHex(const std::string& hex, uint8_t* out) {
  if (hex.size() != 2 * kSecretBytes)
    return Status::InvalidArgument("expected " + std::to_string(2 * kSecretBytes) +
                                   " hex digits, got " + std::to_string(hex.size()) +
                                   " characters");
  auto nibble = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < kSecretBytes; ++i) {
    int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return Status::InvalidArgument(std::string("'").append(hex, 2 * i, 2) + "' at offset " +
                                     std::to_string(2 * i) + " is not hex");
    out[i] = uint8_t(hi << 4 | lo);
  }
  return Status::Ok();
}

// Not a cryptographic hash, and it need not be: the derived secret only keeps unrelated jobs
// (a stale rank, a neighbour reusing the port) from joining each other by accident.
void deriveJobSecret(const std::string& rootAddress, const std::string& jobId, uint8_t* out) {
  std::string input = "chorus-bootstrap-secret|" + rootAddress + "|" + jobId;
  uint64_t h = fnv1a(input);
  for (size_t i = 0; i < kSecretBytes; i += 8) {
    h += 0x9e3779b97f4a7c15ull;  // splitmix64 expands the digest to 32 bytes
    uint64_t z = h;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    memcpy(out + i, &z, 8);
  }
}

Status launchInfoFromEnvironment(double timeoutSec, LaunchInfo* out) {
  if (!out) return Status::InvalidArgument("launchInfoFromEnvironment: null output");
  *out = LaunchInfo();
  const Launcher* found = nullptr;
  for (const Launcher& l : kLaunchers)
    if (envString(l.rank)) {
      found = &l;
      break;
    }
  if (!found)
    return Status::InvalidArgument(
        "no launcher rank in the environment: set CHORUS_RANK and CHORUS_WORLD_SIZE, or start "
        "the job with chorus-run, torchrun, mpirun or srun");
  CHORUS_RETURN_IF_ERROR(readRanks(*found, out));
  std::string rootText;
  SockAddr root;
  CHORUS_RETURN_IF_ERROR(readRootAddress(&rootText, &root));
  if (root.port() == 0)
    return Status::InvalidArgument("the bootstrap root address " + rootText +
                                   " needs a fixed port, not 0: every rank must know it");
  uint8_t secret[kSecretBytes];
  bool weakSecret = false;
  CHORUS_RETURN_IF_ERROR(readSecret(rootText, root, secret, &weakSecret));
  CHORUS_RETURN_IF_ERROR(makeUniqueId(root.host(), root.port(), secret, weakSecret, &out->id));
  LOG_INFO(kLogBoot, "rank %d of %d (from %s), bootstrap root %s", out->rank, out->size,
           out->source.c_str(), root.toString().c_str());
  if (out->rank == 0) return startRoot(&out->id, timeoutSec);
  return Status::Ok();
}

}  // namespace chorus
