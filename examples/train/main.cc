// chorus-train: the reference data-parallel trainer (Fashion-MNIST MLP, SGD with momentum,
// gradient buckets allreduced by Chorus while backward runs). Launch with
//   chorus-run -n 4 -- chorus-train      (or mpirun -np 4 / srun; a plain run is one rank)
#include <cblas.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "blas_core.h"
#include "chorus/chorus.h"
#include "idx.h"
#include "options.h"
#include "strategy_trainer.h"
#include "trainer.h"

namespace {

bool launchedAsRank() {
  for (const char* v : {"CHORUS_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"})
    if (getenv(v)) return true;
  return false;
}

int fail(const char* what, const chorus::Status& st) {
  fprintf(stderr, "chorus-train: %s: %s\n", what, st.toString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  train::restartWithFastBlasKernels(argv);
  train::Options o;
  if (int rc = train::parseOptions(argc, argv, &o); rc >= 0) return rc;
  // One BLAS thread per rank: ranks already fill the cores, and an idle BLAS thread that
  // spins would steal another rank's core.
  openblas_set_num_threads(o.blasThreads);

  std::unique_ptr<chorus::Communicator> comm;
  if (launchedAsRank()) {
    chorus::Config config;
    chorus::Status st = chorus::Config::fromEnvironment(&config);
    if (!st.ok()) return fail("configuration", st);
    st = chorus::Communicator::createFromEnvironment(config, &comm);
    if (!st.ok()) return fail("joining the job", st);
  }
  train::Dataset trainSet, testSet;
  chorus::Status st = train::loadIdxPair(o.data, "train", o.trainLimit, &trainSet);
  if (st.ok()) st = train::loadIdxPair(o.data, "t10k", o.testLimit, &testSet);
  if (!st.ok()) return fail("loading Fashion-MNIST", st);
  if (trainSet.pixels != testSet.pixels)
    return fail("loading Fashion-MNIST",
                chorus::Status::InvalidArgument("training and test images differ in size"));
  st = o.strategy == "ddp" ? train::runTraining(o, comm.get(), trainSet, testSet)
                           : train::runStrategyTraining(o, comm.get(), trainSet, testSet);
  if (!st.ok()) {
    const int rank = comm ? comm->rank() : 0;
    fprintf(stderr, "chorus-train: rank %d: %s\n", rank, st.toString().c_str());
    if (comm) comm->abort();  // the others fail fast instead of waiting out their timeout
    return 1;
  }
  return 0;
}
