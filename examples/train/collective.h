// The few small collectives the training loop needs besides gradient buckets, run through the
// communication thread; each is a no-op on a single rank (ct == null).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm_thread.h"

namespace train {

chorus::Status broadcastFloats(CommThread* ct, std::vector<float>* v);
chorus::Status broadcastDoubles(CommThread* ct, std::vector<double>* v);
chorus::Status sumDoubles(CommThread* ct, double* v, size_t n);
// 64-bit hash of the parameter bytes.
uint64_t hashParams(const std::vector<float>& p);
// Compares the parameter hash of every rank of `group` (the world when null; a split of it run
// through the same thread otherwise); an error names the ranks that differ from its rank 0.
chorus::Status checkReplicasAgree(CommThread* ct, int size, const std::vector<float>& params,
                                  uint64_t step, uint64_t* hash,
                                  chorus::Communicator* group = nullptr);
std::string hexHash(uint64_t h);

}  // namespace train
