#include "transport/registry.h"

#include <algorithm>
#include <sstream>

#include "common/log.h"

namespace chorus {

// Each transport's folder defines its entry.
TransportEntry shmTransportEntry();
TransportEntry tcpTransportEntry();
TransportEntry ibTransportEntry();
TransportEntry ofiTransportEntry();

const std::vector<TransportEntry>& registeredTransports() {
  static const std::vector<TransportEntry> entries = [] {
    std::vector<TransportEntry> e{shmTransportEntry(), tcpTransportEntry(), ibTransportEntry(),
                                  ofiTransportEntry()};
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

bool canOpen(const std::vector<TransportEntry>& entries, const JobShape& job, int rank, size_t k) {
  if (job.opens.empty()) return !entries[k].opens;
  return job.opens[size_t(rank)] >> k & 1;
}

// The entry CHORUS_NET=`net` selects.
size_t netIndex(const std::vector<TransportEntry>& entries, const std::string& net) {
  for (size_t k = 0; k < entries.size(); ++k)
    if (entries[k].net && net == entries[k].net) return k;
  return 0;
}

}  // namespace

bool transportAllowed(const std::string& spec, const char* name) {
  if (spec == "auto") return true;
  for (const std::string& n : splitNames(spec))
    if (n == name) return true;
  return false;
}

bool transportForced(const Config& config, const char* name) {
  return config.net == name ||
         (config.transport != "auto" && transportAllowed(config.transport, name));
}

// Whether CHORUS_NET lets this entry carry a pair of ranks on different hosts.
bool netAllows(const Config& config, const TransportEntry& e) {
  return config.net == "auto" || !e.net || config.net == e.net;
}

uint32_t transportsThisRankOpens(const Config& config, int rank) {
  const std::vector<TransportEntry>& entries = registeredTransports();
  uint32_t bits = 0;
  for (size_t k = 0; k < entries.size(); ++k) {
    const TransportEntry& e = entries[k];
    std::string why;
    const bool wanted = transportAllowed(config.transport, e.name) && netAllows(config, e);
    if (!e.opens || (wanted && e.opens(config, &why))) {
      bits |= uint32_t(1) << k;
    } else if (wanted && transportForced(config, e.name)) {
      LOG_WARN(kLogInit,
               "rank %d: %s cannot be opened, though CHORUS_NET/CHORUS_TRANSPORT names it: %s",
               rank, e.name, why.c_str());
    } else if (wanted) {
      LOG_INFO(kLogInit, "rank %d: no %s between hosts (%s); TCP carries them", rank, e.name,
               why.c_str());
    }
  }
  return bits;
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
            // RDMA carries pairs on one host only when named (to test it on one machine)
            (job.sameHost(a, b) ? !entries[k].opens || transportForced(config, entries[k].name)
                                : netAllows(config, entries[k])) &&
            canOpen(entries, job, a, k) && canOpen(entries, job, b, k) &&
            entries[k].canReach(job, a, b, kind))
          pick = int(k);
      if (pick < 0 && config.net != "auto" && !job.sameHost(a, b))
        return Status::InvalidArgument(
            "CHORUS_NET=" + config.net + " but rank " +
            std::to_string(canOpen(entries, job, a, netIndex(entries, config.net)) ? b : a) +
            " cannot open it (its log says why at WARN); use CHORUS_NET=auto to fall back to TCP");
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
