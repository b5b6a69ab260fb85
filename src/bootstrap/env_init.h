// Joining a job from the launcher's environment (chorus-run, torchrun, mpirun, srun) without
// passing a unique id by hand: rank and size come from the launcher's variables, the root
// address from CHORUS_COMM_ID or MASTER_ADDR/MASTER_PORT, and rank 0 starts the root there.
//
// Variables, first launcher found wins:
//   Chorus:   CHORUS_RANK, CHORUS_WORLD_SIZE, CHORUS_LOCAL_RANK, CHORUS_LOCAL_SIZE
//   torchrun: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE
//   Open MPI: OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE
//   Slurm:    SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID (local size: SLURM_NTASKS_PER_NODE)
//   Root:     CHORUS_COMM_ID=host:port ([v6addr]:port), else MASTER_ADDR + MASTER_PORT
//   Secret:   CHORUS_SECRET (64 hex digits), else derived from the root address and the job
//             id (TORCHELASTIC_RUN_ID, OMPI_MCA_ess_base_jobid, SLURM_JOB_ID): weaker, since
//             anyone who can read those can compute it.
#pragma once

#include <string>

#include "bootstrap/bootstrap.h"

namespace chorus {

struct LaunchInfo {
  int rank = 0;
  int size = 1;
  int localRank = -1;  // -1: the launcher did not say
  int localSize = -1;
  UniqueId id{};
  std::string source;  // "chorus", "torchrun", "openmpi" or "slurm"
};

// Reads the environment; on rank 0 also starts the bootstrap root (waiting `timeoutSec` for
// the ranks). Then call Bootstrap::connect(out->id, out->rank, out->size, ...).
Status launchInfoFromEnvironment(double timeoutSec, LaunchInfo* out);

// The secret derivation, exposed for tests: the same inputs give the same 32 bytes.
void deriveJobSecret(const std::string& rootAddress, const std::string& jobId, uint8_t* out);
// Parses 64 hex digits into kSecretBytes.
Status parseSecretHex(const std::string& hex, uint8_t* out);

}  // namespace chorus
