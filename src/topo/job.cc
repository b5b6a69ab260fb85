// buildJobTopology: three small allgathers. (1) who am I: host id, GPU, socket, and a digest of
// the topology file so that ranks told different files fail together instead of disagreeing;
// (2) the length of each host leader's description; (3) the descriptions, padded.
#include "topo/job.h"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/fnv1a.h"
#include "common/log.h"
#include "topo/probe.h"

namespace chorus::topo {

namespace {

struct Hello {
  char hostId[256];
  char gpuBusId[32];
  int32_t socket;
  int32_t fileStatus;  // 0 no file, 1 loaded, -1 failed to load
  uint64_t fileDigest;
};

std::string field(const char* p, size_t n) {
  return std::string(p, strnlen(p, n));
}

// Places every rank on a host of `t` (by its host id, in order of first appearance) and on
// its GPU (by bus id), then drops hosts that got no rank.
Status placeRanks(const std::vector<Hello>& all, const std::vector<int>& hostOf, Topology* t) {
  std::vector<RankPlace> ranks(all.size());
  std::vector<bool> used(t->hosts.size(), false);
  for (size_t r = 0; r < all.size(); ++r) {
    RankPlace& p = ranks[r];
    p.host = hostOf[r];
    const Host& h = t->hosts[p.host];
    used[p.host] = true;
    std::string bus = field(all[r].gpuBusId, sizeof all[r].gpuBusId);
    for (size_t g = 0; g < h.gpus.size() && !bus.empty(); ++g)
      if (h.gpus[g].busId == bus) p.gpu = int(g);
    if (!bus.empty() && p.gpu < 0)
      LOG_WARN(kLogInit,
               "topo: rank %zu uses GPU %s, which host %s does not list; placing it as a "
               "host-memory rank",
               r, bus.c_str(), h.name.c_str());
    p.socket = p.gpu >= 0 ? h.gpus[p.gpu].socket : std::clamp(int(all[r].socket), 0, h.sockets - 1);
  }
  std::vector<int> newIndex(t->hosts.size(), -1);
  std::vector<Host> kept;
  for (size_t h = 0; h < t->hosts.size(); ++h)
    if (used[h]) newIndex[h] = int(kept.size()), kept.push_back(std::move(t->hosts[h]));
  for (RankPlace& p : ranks) p.host = newIndex[p.host];
  t->hosts = std::move(kept);
  t->ranks = std::move(ranks);
  return Status::Ok();
}

Status shareHosts(int rank, const std::vector<int>& leaderOf, const AllgatherFn& allgather,
                  Topology* t) {
  int size = int(leaderOf.size());
  std::string mine;
  if (leaderOf[rank] == rank) {
    Topology local;
    local.hosts.emplace_back();
    CHORUS_RETURN_IF_ERROR(discoverLocalHost(&local.hosts[0], nullptr));
    placeRanksPerGpu(&local);
    mine = formatTopology(local);
  }
  uint64_t len = mine.size();
  std::vector<uint64_t> lens(size);
  CHORUS_RETURN_IF_ERROR(allgather(&len, sizeof len, lens.data()));
  uint64_t maxLen = 1;
  for (uint64_t l : lens) maxLen = std::max(maxLen, l);
  mine.resize(maxLen, '\0');
  std::vector<char> texts(size * maxLen);
  CHORUS_RETURN_IF_ERROR(allgather(mine.data(), maxLen, texts.data()));
  for (int r = 0; r < size; ++r) {
    if (leaderOf[r] != r) continue;
    Topology one;
    std::string text(texts.data() + r * maxLen, lens[r]);
    CHORUS_RETURN_IF_ERROR(
        parseTopology(text, "host description of rank " + std::to_string(r), &one));
    t->hosts.push_back(std::move(one.hosts.at(0)));
  }
  return Status::Ok();
}

}  // namespace

int currentSocket() {
  int cpu = sched_getcpu();
  if (cpu < 0) return 0;
  std::ifstream f("/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
                  "/topology/physical_package_id");
  int pkg = 0;
  return (f >> pkg) && pkg >= 0 ? pkg : 0;
}

Status buildJobTopology(int rank, int size, const JobTopologyOptions& opts,
                        const AllgatherFn& allgather, Topology* out) {
  Topology t;
  Status fileStatus;
  Hello me{};
  std::string hostId = opts.hostId.empty() ? defaultHostId() : opts.hostId;
  snprintf(me.hostId, sizeof me.hostId, "%s", hostId.c_str());
  snprintf(me.gpuBusId, sizeof me.gpuBusId, "%s",
           opts.gpuBusId.empty() ? "" : normalizeBusId(opts.gpuBusId).c_str());
  me.socket = opts.socket >= 0 ? opts.socket : currentSocket();
  if (!opts.topoFile.empty()) {
    fileStatus = loadTopologyFile(opts.topoFile, &t);
    me.fileStatus = fileStatus.ok() ? 1 : -1;
    if (fileStatus.ok()) me.fileDigest = fnv1a(formatTopology(t));
  }
  std::vector<Hello> all(size);
  CHORUS_RETURN_IF_ERROR(allgather(&me, sizeof me, all.data()));
  if (!fileStatus.ok()) return fileStatus.withContext("CHORUS_TOPO_FILE");
  for (int r = 0; r < size; ++r)
    if (all[r].fileStatus != me.fileStatus || all[r].fileDigest != me.fileDigest)
      return Status::InvalidArgument(
          "rank " + std::to_string(r) + " and rank " + std::to_string(rank) +
          " disagree about the topology (CHORUS_TOPO_FILE unset on one, a different file, or a "
          "file that failed to load there): set the same CHORUS_TOPO_FILE on every rank");

  // Host of each rank: the lowest rank with the same host id leads it.
  std::vector<int> leaderOf(size), hostOf(size);
  std::vector<int> leaders;
  for (int r = 0; r < size; ++r) {
    leaderOf[r] = r;
    for (int p = 0; p < r; ++p)
      if (strncmp(all[p].hostId, all[r].hostId, sizeof me.hostId) == 0) {
        leaderOf[r] = leaderOf[p];
        break;
      }
    if (leaderOf[r] == r) leaders.push_back(r);
    hostOf[r] = int(std::find(leaders.begin(), leaders.end(), leaderOf[r]) - leaders.begin());
  }

  if (opts.topoFile.empty()) {
    CHORUS_RETURN_IF_ERROR(shareHosts(rank, leaderOf, allgather, &t));
    t.source = "discovered";
    for (size_t h = 0; h < t.hosts.size(); ++h)
      t.hosts[h].id = field(all[leaders[h]].hostId, sizeof me.hostId);
    CHORUS_RETURN_IF_ERROR(placeRanks(all, hostOf, &t));
  } else if (int(t.ranks.size()) != size) {
    // The file describes machines, not this job's placement: map real hosts onto its hosts.
    if (leaders.size() > t.hosts.size())
      return Status::InvalidArgument(
          "CHORUS_TOPO_FILE " + opts.topoFile + " describes " + std::to_string(t.hosts.size()) +
          " host(s) but the job runs on " + std::to_string(leaders.size()) +
          ": add host blocks (or a count) to the file");
    CHORUS_RETURN_IF_ERROR(placeRanks(all, hostOf, &t));
  }
  LOG_INFO(kLogInit, "topo: rank %d: %zu host(s), %d rank(s), from %s", rank, t.hosts.size(), size,
           t.source.c_str());
  if (rank == 0 && !opts.dumpFile.empty()) {
    Status st = saveTopologyFile(t, opts.dumpFile);
    if (st.ok())
      LOG_INFO(kLogInit, "topo: wrote %s", opts.dumpFile.c_str());
    else
      LOG_WARN(kLogInit, "topo: CHORUS_TOPO_DUMP_FILE: %s", st.toString().c_str());
  }
  *out = std::move(t);
  return Status::Ok();
}

}  // namespace chorus::topo
