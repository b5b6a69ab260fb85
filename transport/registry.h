// How transports join a job. Each transport declares its name, a priority, which pairs of
// ranks it can carry for a kind of memory, and how it is made; every pair of ranks takes the
// highest-priority allowed transport that reaches it, and every transport some pair in the
// job uses is made on every rank (its set-up is collective). Adding a transport touches its
// own folder, which defines its entry, and the list in registry.cc.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "chorus/config.h"
#include "engine/memory.h"
#include "transport/doorbell.h"
#include "transport/transport.h"

namespace chorus {

// What every rank knows alike about the job once it has started.
struct JobShape {
  std::vector<int> hostOf;  // rank -> the lowest rank on the same host
  // rank -> the transports it can open, a bit per index into the registry's entries; empty
  // when not asked, which counts only those that need no device (TransportEntry::opens)
  std::vector<uint32_t> opens;
  bool oneHost() const;
  bool sameHost(int a, int b) const { return hostOf[size_t(a)] == hostOf[size_t(b)]; }
};

// What a transport is made with.
struct TransportContext {
  Bootstrap* bootstrap = nullptr;
  const Config* config = nullptr;
  const JobShape* job = nullptr;
  std::vector<bool> peers;       // peers[q]: this rank talks to q over this transport (symmetric)
  size_t chunkBytes = 0;         // the job's message size, which every transport must carry
  Doorbell* doorbell = nullptr;  // ring when something arrives for the executor
  // A connection failed. Called from any thread; records and returns, never waits.
  std::function<void(const Status&)> onError;
  const std::atomic<bool>* failed = nullptr;  // set once the communicator has failed
  Deadline deadline = Deadline::never();
};

struct TransportEntry {
  const char* name;
  int priority;  // the higher wins where several reach a pair
  // Whether it can carry memory of kind `kind` between ranks a and b. Every rank asks the same
  // question of every pair, so every rank agrees on which transports the job uses.
  bool (*canReach)(const JobShape& job, int a, int b, MemoryKind kind);
  // The CHORUS_NET value that selects it (ib, ofi, socket), or nullptr for one it does not
  // govern (shm within a host).
  const char* net = nullptr;
  // Whether this rank can open it (a library and a device are there), or nullptr for always.
  // Asked once per communicator; `why` says what is missing.
  bool (*opens)(const Config& config, std::string* why) = nullptr;
  size_t (*chunkBytes)(const Config& config);  // the largest payload one message carries
  // The settings that must agree across ranks, as "NAME=value" text for the error if not.
  std::string (*mustAgree)(const Config& config);
  Status (*create)(const TransportContext& ctx, std::unique_ptr<Transport>* out);
};

// Every transport compiled in, highest priority first.
const std::vector<TransportEntry>& registeredTransports();

// Config::transport: "auto" or a comma-separated list of registered names.
Status checkTransportNames(const std::string& spec);
// Whether that setting lets transport `name` carry any pair.
bool transportAllowed(const std::string& spec, const char* name);
// Whether CHORUS_TRANSPORT or CHORUS_NET names this transport outright (not just "auto").
bool transportForced(const Config& config, const char* name);
// This rank's JobShape::opens bits, logging what keeps a forced transport from opening.
uint32_t transportsThisRankOpens(const Config& config, int rank);

// Which transport each of this rank's peers uses, and what the whole job uses.
struct TransportChoice {
  std::vector<int> of;     // per rank: index into the entries; -1 for this rank itself
  std::vector<bool> used;  // per entry: some pair in the job uses it
  size_t chunkBytes = 0;   // the smallest of the used transports' chunk sizes
};
Status chooseTransports(const std::vector<TransportEntry>& entries, const JobShape& job, int rank,
                        const Config& config, MemoryKind kind, TransportChoice* out);

}  // namespace chorus
