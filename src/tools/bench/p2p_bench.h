// OSU-style point-to-point tests between ranks 0 and 1 (other ranks wait):
//   latency  ping-pong, one-way time = round trip / 2
//   bw       rank 0 posts a window of W sends, rank 1 W receives, then a 4-byte ack
//   bibw     both post W sends and W receives at once
// Each iteration (one round trip or one window) is timed on rank 0; the table shows medians.
#pragma once

#include "backend.h"
#include "options.h"

namespace chorus::bench {

int runPointToPoint(const Options& o, Backend& b);

}  // namespace chorus::bench
