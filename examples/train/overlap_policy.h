// Whether data parallelism overlaps its gradient allreduces with backward, when the command line
// leaves it open. Overlap hides communication only where a CPU is free to run it: with every CPU
// busy training, the communication thread takes its time from backward, which besides cuts its
// weight gradients into bucket-sized slices (each packing its input again) so that buckets can
// leave early. Measured on 2 ranks sharing 2 CPUs: 1.38-1.46x one rank overlapped, 1.48-1.59x
// with one allreduce after backward (docs/trainer.md, "Overlap only with a CPU to spare").
#pragma once

#include <string>

#include "chorus/communicator.h"

namespace train {

// How many ranks run on this rank's machine and how many CPUs this rank can count on.
struct HostShare {
  int localRanks = 1;
  int cpus = 1;  // the CPUs it may run on, or its even share of the machine's, whichever is less
};

// Ranks on one machine are told apart by Chorus's host id (host name and boot id, so ranks in
// separate network namespaces of one machine count as one: they share its CPUs); a collective
// over `comm`, so every rank calls it.
chorus::Status measureHostShare(chorus::Communicator& comm, HostShare* out);

// Overlap pays when each rank has a CPU for its training thread and one for communication.
bool overlapPays(const HostShare& h);

// "2 rank(s) on this machine, 1 CPU each": why, for the run's first line.
std::string describe(const HostShare& h);

}  // namespace train
