#include "transport/registry.h"

#include <algorithm>
#include <sstream>

namespace chorus {

// Each transport's folder defines its entry.
TransportEntry shmTransportEntry();
TransportEntry tcpTransportEntry();

const std::vector<TransportEntry>& registeredTransports() {
  static const std::vector<TransportEntry> entries = [] {
    std::vector<TransportEntry> e{shmTransportEntry(), tcpTransportEntry()};
    std::stable_sort(e.begin(), e.end(), [](const TransportEntry& a, const TransportEntry& b) {
      return a.priority > b.priority;
    });
    return e;
  }();
  return entries;
}

bool JobShape::oneHost() const {
  return std::all_of(hostOf.begin(), hostOf.end(), [&](int h) { return h == hostOf[0]; });
}

namespace {

std::vector<std::string> splitNames(const std::string& spec) {
  std::vector<std::string> names;
  std::stringstream in(spec);
  for (std::string n; std::getline(in, n, ',');)
    if (!n.empty()) names.push_back(n);
  return names;
}

std::string registeredNames() {
  std::string all;
  for (const TransportEntry& e : registeredTransports())
    all += (all.empty() ? "" : ", ") + std::string(e.name);
  return all;
}

}  // namespace

bool transportAllowed(const std::string& spec, const char* name) {
  if (spec == "auto") return true;
  for (const std::string& n : splitNames(spec))
    if (n == name) return true;
  return false;
}

Status checkTransportNames(const std::string& spec) {
  if (spec == "auto") return Status::Ok();
  const std::vector<std::string> names = splitNames(spec);
  if (names.empty())
    return Status::InvalidArgument(
        "CHORUS_TRANSPORT='" + spec +
        "' names no transport; use auto or some of: " + registeredNames());
  for (const std::string& n : names) {
    bool known = false;
    for (const TransportEntry& e : registeredTransports()) known |= n == e.name;
    if (!known)
      return Status::InvalidArgument("CHORUS_TRANSPORT names '" + n +
                                     "', which is not a transport of this build; use auto or "
                                     "some of: " +
                                     registeredNames());
  }
  return Status::Ok();
}

Status chooseTransports(const std::vector<TransportEntry>& entries, const JobShape& job, int rank,
                        const Config& config, MemoryKind kind, TransportChoice* out) {
  const int size = int(job.hostOf.size());
  out->of.assign(size_t(size), -1);
  out->used.assign(entries.size(), false);
  // Every pair of the job, so that every rank knows which transports anyone uses.
  for (int a = 0; a < size; ++a) {
    for (int b = a + 1; b < size; ++b) {
      int pick = -1;
      for (size_t k = 0; k < entries.size() && pick < 0; ++k)
        if (transportAllowed(config.transport, entries[k].name) &&
            entries[k].canReach(job, a, b, kind))
          pick = int(k);
      if (pick < 0)
        return Status::InvalidArgument("no transport reaches rank " + std::to_string(b) +
                                       " from rank " + std::to_string(a) + " for " +
                                       memoryKindName(kind) + " (" +
                                       (job.sameHost(a, b) ? "same host" : "different hosts") +
                                       ", CHORUS_TRANSPORT=" + config.transport +
                                       "; this build has " + registeredNames() + ")");
      out->used[size_t(pick)] = true;
      if (a == rank) out->of[size_t(b)] = pick;
      if (b == rank) out->of[size_t(a)] = pick;
    }
  }
  out->chunkBytes = 0;
  for (size_t k = 0; k < entries.size(); ++k)
    if (out->used[k]) {
      const size_t c = entries[k].chunkBytes(config);
      out->chunkBytes = out->chunkBytes ? std::min(out->chunkBytes, c) : c;
    }
  if (!out->chunkBytes) out->chunkBytes = config.shmSlotBytes;  // one rank: no messages at all
  return Status::Ok();
}

}  // namespace chorus
