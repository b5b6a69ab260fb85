// Reading the topology file format (docs/topology.md): line based, '#' comments, "key=value"
// attributes. Errors name the file and line. Tuning files may also be JSON (estimates_json.h).
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "topo/estimates_json.h"
#include "topo/probe.h"
#include "topo/topology.h"

namespace chorus::topo {

namespace {

// Far beyond any machine or job, and small enough that a typo ("count=1000000000") is an
// error rather than minutes of work and gigabytes (tests/fuzz).
constexpr int kMaxHosts = 1 << 16;
constexpr int kMaxSockets = 1 << 10;
constexpr size_t kMaxRanks = size_t(1) << 20;

struct Parser {
  std::string origin;
  int line = 0;
  std::string where;  // in place of the line number, for lines read from JSON ("estimates.reduce")
  Topology* t = nullptr;
  bool inHost = false;
  Host host;
  int count = 1;
  bool sawRanks = false;
  // A tuning file: reduce, link, executor, efficiency and memory lines only.
  bool estimatesOnly = false;
  // Overrides collected while inside a host block, applied at "end" once paths are derived.
  std::vector<std::pair<int, int>> nvlinks;
  bool nvlinkAll = false;
  struct Override {
    int gpu;
    bool toNic;
    int other;
    PathClass c;
  };
  std::vector<Override> overrides;

  Status error(const std::string& m) const {
    const std::string at = where.empty() ? std::to_string(line) : " " + where;
    return Status::InvalidArgument(origin + ":" + at + ": " + m);
  }

  Status toInt(const std::string& s, int* v) const {
    auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size())
      return error("bad integer '" + s + "'");
    return Status::Ok();
  }
  Status toDouble(const std::string& s, double* v) const {
    auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
    // Not "nan" or "inf" either: no estimate or device figure is meant to be one (tests/fuzz).
    if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(*v))
      return error("bad number '" + s + "'");
    return Status::Ok();
  }

  // Splits "key=value" tokens starting at index `from`; bare tokens are an error.
  Status attrs(const std::vector<std::string>& tok, size_t from,
               std::vector<std::pair<std::string, std::string>>* out) const {
    for (size_t i = from; i < tok.size(); ++i) {
      size_t eq = tok[i].find('=');
      if (eq == std::string::npos || eq == 0)
        return error("expected key=value, got '" + tok[i] + "'");
      out->push_back({tok[i].substr(0, eq), tok[i].substr(eq + 1)});
    }
    return Status::Ok();
  }

  Status parseHostLine(const std::vector<std::string>& tok) {
    if (inHost) return error("'host' inside a host block (missing 'end')");
    if (tok.size() < 2 || tok[1].find('=') != std::string::npos)
      return error("'host' needs a name");
    host = Host{};
    host.name = tok[1];
    count = 1;
    nvlinks.clear(), overrides.clear(), nvlinkAll = false;
    std::vector<std::pair<std::string, std::string>> kv;
    CHORUS_RETURN_IF_ERROR(attrs(tok, 2, &kv));
    for (auto& [k, v] : kv) {
      if (k == "count")
        CHORUS_RETURN_IF_ERROR(toInt(v, &count));
      else if (k == "id")
        host.id = v;
      else if (k == "sockets")
        CHORUS_RETURN_IF_ERROR(toInt(v, &host.sockets));
      else if (k == "cores_per_socket")
        CHORUS_RETURN_IF_ERROR(toInt(v, &host.coresPerSocket));
      else if (k == "numa")
        CHORUS_RETURN_IF_ERROR(toInt(v, &host.numaNodes));
      else
        return error("unknown host attribute '" + k + "'");
    }
    if (count < 1 || count > kMaxHosts)
      return error("count must be 1.." + std::to_string(kMaxHosts));
    if (host.sockets < 1 || host.sockets > kMaxSockets)
      return error("sockets must be 1.." + std::to_string(kMaxSockets));
    inHost = true;
    return Status::Ok();
  }

  Status checkSocket(int s) const {
    if (s < 0 || s >= host.sockets)
      return error("socket " + std::to_string(s) + " outside [0, " + std::to_string(host.sockets) +
                   ") of host " + host.name);
    return Status::Ok();
  }

  Status parseGpu(const std::vector<std::string>& tok) {
    if (tok.size() < 2) return error("'gpu' needs a PCI bus id");
    Gpu g;
    g.busId = tok[1];
    std::vector<std::pair<std::string, std::string>> kv;
    CHORUS_RETURN_IF_ERROR(attrs(tok, 2, &kv));
    for (auto& [k, v] : kv) {
      if (k == "socket")
        CHORUS_RETURN_IF_ERROR(toInt(v, &g.socket));
      else if (k == "numa")
        CHORUS_RETURN_IF_ERROR(toInt(v, &g.numa));
      else if (k == "pci")
        g.pci = v;
      else if (k == "pcie_gts")
        CHORUS_RETURN_IF_ERROR(toDouble(v, &g.pcieGTs));
      else if (k == "pcie_width")
        CHORUS_RETURN_IF_ERROR(toInt(v, &g.pcieWidth));
      else if (k == "nvlinks")
        CHORUS_RETURN_IF_ERROR(toInt(v, &g.nvlinks));
      else if (k == "nvlink_gbs")
        CHORUS_RETURN_IF_ERROR(toDouble(v, &g.nvlinkGBs));
      else
        return error("unknown gpu attribute '" + k + "'");
    }
    // 0 means unknown and is not written back, so a negative value would not survive a dump.
    if (g.pcieGTs < 0 || g.pcieWidth < 0) return error("pcie_gts and pcie_width must be >= 0");
    if (g.nvlinks < 0 || g.nvlinkGBs < 0) return error("nvlinks and nvlink_gbs must be >= 0");
    CHORUS_RETURN_IF_ERROR(checkSocket(g.socket));
    host.gpus.push_back(g);
    return Status::Ok();
  }

  Status parseNic(const std::vector<std::string>& tok) {
    if (tok.size() < 2) return error("'nic' needs a name");
    Nic n;
    n.name = tok[1];
    std::vector<std::pair<std::string, std::string>> kv;
    CHORUS_RETURN_IF_ERROR(attrs(tok, 2, &kv));
    for (auto& [k, v] : kv) {
      int flag = 0;
      if (k == "bus")
        n.busId = v;
      else if (k == "socket")
        CHORUS_RETURN_IF_ERROR(toInt(v, &n.socket));
      else if (k == "numa")
        CHORUS_RETURN_IF_ERROR(toInt(v, &n.numa));
      else if (k == "pci")
        n.pci = v;
      else if (k == "speed_gbps")
        CHORUS_RETURN_IF_ERROR(toDouble(v, &n.speedGbps));
      else if (k == "rdma") {
        CHORUS_RETURN_IF_ERROR(toInt(v, &flag));
        n.rdma = flag != 0;
      } else
        return error("unknown nic attribute '" + k + "'");
    }
    CHORUS_RETURN_IF_ERROR(checkSocket(n.socket));
    host.nics.push_back(n);
    return Status::Ok();
  }

  Status parseNvlink(const std::vector<std::string>& tok) {
    if (tok.size() == 2 && tok[1] == "all") {
      nvlinkAll = true;
      return Status::Ok();
    }
    for (size_t i = 1; i < tok.size(); ++i) {
      size_t dash = tok[i].find('-');
      if (dash == std::string::npos)
        return error("nvlink pairs are written 'i-j', got '" + tok[i] + "'");
      int a = 0, b = 0;
      CHORUS_RETURN_IF_ERROR(toInt(tok[i].substr(0, dash), &a));
      CHORUS_RETURN_IF_ERROR(toInt(tok[i].substr(dash + 1), &b));
      nvlinks.push_back({a, b});
    }
    return Status::Ok();
  }

  Status parsePath(const std::vector<std::string>& tok) {
    if (tok.size() != 6 || tok[1] != "gpu" || (tok[3] != "gpu" && tok[3] != "nic"))
      return error("expected 'path gpu I gpu|nic J CLASS'");
    Override ov{};
    CHORUS_RETURN_IF_ERROR(toInt(tok[2], &ov.gpu));
    ov.toNic = tok[3] == "nic";
    CHORUS_RETURN_IF_ERROR(toInt(tok[4], &ov.other));
    if (!parsePathClass(tok[5], &ov.c)) return error("unknown path class '" + tok[5] + "'");
    overrides.push_back(ov);
    return Status::Ok();
  }

  Status endHost() {
    if (!inHost) return error("'end' outside a host block");
    inHost = false;
    derivePaths(&host);
    int g = int(host.gpus.size()), n = int(host.nics.size());
    for (int i = 0; nvlinkAll && i < g; ++i)
      for (int j = 0; j < g; ++j)
        if (i != j) host.gpuPaths[i][j] = PathClass::NVLink;
    for (auto [a, b] : nvlinks) {
      if (a < 0 || b < 0 || a >= g || b >= g || a == b) return error("nvlink pair out of range");
      host.gpuPaths[a][b] = host.gpuPaths[b][a] = PathClass::NVLink;
    }
    for (const Override& ov : overrides) {
      if (ov.gpu < 0 || ov.gpu >= g || ov.other < 0 || ov.other >= (ov.toNic ? n : g))
        return error("path index out of range in host " + host.name);
      (ov.toNic ? host.gpuNicPaths : host.gpuPaths)[ov.gpu][ov.other] = ov.c;
    }
    if (t->hosts.size() + size_t(count) > size_t(kMaxHosts))
      return error("more than " + std::to_string(kMaxHosts) + " hosts");
    for (int i = 0; i < count; ++i) {
      Host h = host;
      if (count > 1) {
        // append(), not += "-" + ...: GCC 12 warns falsely (-Wrestrict) on the latter.
        h.name.append("-").append(std::to_string(i));
        if (!h.id.empty()) h.id.append("-").append(std::to_string(i));
      }
      t->hosts.push_back(std::move(h));
    }
    return Status::Ok();
  }

  Status parseLink(const std::vector<std::string>& tok) {
    PathClass c;
    if (tok.size() < 2 || !parsePathClass(tok[1], &c)) return error("'link' needs a path class");
    LinkParams p = defaultLink(c);
    std::vector<std::pair<std::string, std::string>> kv;
    CHORUS_RETURN_IF_ERROR(attrs(tok, 2, &kv));
    for (auto& [k, v] : kv) {
      if (k == "latency_us")
        CHORUS_RETURN_IF_ERROR(toDouble(v, &p.latencyUs));
      else if (k == "bandwidth_gbs")
        CHORUS_RETURN_IF_ERROR(toDouble(v, &p.bandwidthGBs));
      else
        return error("unknown link attribute '" + k + "'");
    }
    t->links[c] = p;
    return Status::Ok();
  }

  Status parseReduce(const std::vector<std::string>& tok) {
    std::vector<std::pair<std::string, std::string>> kv;
    CHORUS_RETURN_IF_ERROR(attrs(tok, 1, &kv));
    for (auto& [k, v] : kv) {
      if (k == "host_gbs")
        CHORUS_RETURN_IF_ERROR(toDouble(v, &t->hostReduceGBs));
      else if (k == "device_gbs")
        CHORUS_RETURN_IF_ERROR(toDouble(v, &t->deviceReduceGBs));
      else if (k == "device_copy_gbs")
        CHORUS_RETURN_IF_ERROR(toDouble(v, &t->deviceCopyGBs));
      else
        return error("unknown reduce attribute '" + k + "'");
    }
    if (t->deviceCopyGBs < 0) return error("device_copy_gbs must be >= 0");
    return Status::Ok();
  }

  Status parseExecutor(const std::vector<std::string>& tok) {
    std::vector<std::pair<std::string, std::string>> kv;
    CHORUS_RETURN_IF_ERROR(attrs(tok, 1, &kv));
    for (auto& [k, v] : kv) {
      if (k == "device_message_kib") {
        int kib = 0;
        CHORUS_RETURN_IF_ERROR(toInt(v, &kib));
        if (kib < 0) return error("device_message_kib must be >= 0");
        t->deviceMessageBytes = uint64_t(kib) << 10;
        continue;
      }
      if (k != "step_us") return error("unknown executor attribute '" + k + "'");
      CHORUS_RETURN_IF_ERROR(toDouble(v, &t->stepOverheadUs));
      if (t->stepOverheadUs < 0) return error("step_us must be >= 0");
    }
    return Status::Ok();
  }

  Status parseEfficiency(const std::vector<std::string>& tok) {
    std::vector<std::pair<std::string, std::string>> kv;
    CHORUS_RETURN_IF_ERROR(attrs(tok, 1, &kv));
    for (auto& [k, v] : kv) {
      if (k == "nvlink")
        CHORUS_RETURN_IF_ERROR(toDouble(v, &t->nvlinkEfficiency));
      else if (k == "nic")
        CHORUS_RETURN_IF_ERROR(toDouble(v, &t->nicEfficiency));
      else
        return error("unknown efficiency attribute '" + k + "'");
    }
    if (t->nvlinkEfficiency <= 0 || t->nvlinkEfficiency > 1 || t->nicEfficiency <= 0 ||
        t->nicEfficiency > 1)
      return error("efficiencies must be in (0, 1]");
    return Status::Ok();
  }

  Status parseMemory(const std::vector<std::string>& tok) {
    std::vector<std::pair<std::string, std::string>> kv;
    CHORUS_RETURN_IF_ERROR(attrs(tok, 1, &kv));
    for (auto& [k, v] : kv) {
      if (k == "cache_mib")
        CHORUS_RETURN_IF_ERROR(toDouble(v, &t->cacheMiB));
      else if (k == "all_miss_mib")
        CHORUS_RETURN_IF_ERROR(toDouble(v, &t->allMissMiB));
      else if (k == "miss_gbs")
        CHORUS_RETURN_IF_ERROR(toDouble(v, &t->missGBs));
      else
        return error("unknown memory attribute '" + k + "'");
    }
    if (t->cacheMiB < 0 || t->missGBs < 0) return error("cache_mib and miss_gbs must be >= 0");
    if (t->allMissMiB < t->cacheMiB) return error("all_miss_mib must be >= cache_mib");
    return Status::Ok();
  }

  Status parseRanks(const std::vector<std::string>& tok) {
    sawRanks = true;
    if (tok.size() == 2 && tok[1] == "per_gpu") {
      placeRanksPerGpu(t);
      return Status::Ok();
    }
    int n = 0;
    if (tok.size() == 3 && tok[1] == "per_host") {
      CHORUS_RETURN_IF_ERROR(toInt(tok[2], &n));
      if (n < 1) return error("per_host needs a count >= 1");
      if (size_t(n) * t->hosts.size() > kMaxRanks)
        return error("more than " + std::to_string(kMaxRanks) + " ranks");
      placeRanksPerHost(t, n);
      return Status::Ok();
    }
    return error("expected 'ranks per_gpu' or 'ranks per_host N'");
  }

  Status parseRank(const std::vector<std::string>& tok) {
    if (tok.size() != 4) return error("expected 'rank HOST SOCKET GPU'");
    RankPlace r;
    CHORUS_RETURN_IF_ERROR(toInt(tok[1], &r.host));
    CHORUS_RETURN_IF_ERROR(toInt(tok[2], &r.socket));
    CHORUS_RETURN_IF_ERROR(toInt(tok[3], &r.gpu));
    if (r.host < 0 || r.host >= int(t->hosts.size()))
      return error("rank on unknown host " + tok[1]);
    const Host& h = t->hosts[r.host];
    if (r.socket < 0 || r.socket >= h.sockets) return error("rank on unknown socket " + tok[2]);
    if (r.gpu < -1 || r.gpu >= int(h.gpus.size())) return error("rank on unknown gpu " + tok[3]);
    if (t->ranks.size() >= kMaxRanks)
      return error("more than " + std::to_string(kMaxRanks) + " ranks");
    sawRanks = true;
    t->ranks.push_back(r);
    return Status::Ok();
  }

  Status parseLine(const std::vector<std::string>& tok) {
    const std::string& k = tok[0];
    if (inHost) {
      if (k == "gpu") return parseGpu(tok);
      if (k == "nic") return parseNic(tok);
      if (k == "nvlink") return parseNvlink(tok);
      if (k == "path") return parsePath(tok);
      if (k == "end") return endHost();
      if (k == "host") return parseHostLine(tok);
      return error("unknown line '" + k + "' in a host block");
    }
    if (k == "chorus-topology") {
      if (tok.size() != 2 || tok[1] != "1") return error("unsupported format version");
      return Status::Ok();
    }
    if (k == "link") return parseLink(tok);
    if (k == "reduce") return parseReduce(tok);
    if (k == "executor") return parseExecutor(tok);
    if (k == "efficiency") return parseEfficiency(tok);
    if (k == "memory") return parseMemory(tok);
    if (estimatesOnly)
      return error("'" + k +
                   "' does not belong in a tuning file (reduce, link, executor, "
                   "efficiency, memory only)");
    if (k == "host") return parseHostLine(tok);
    if (k == "ranks") return parseRanks(tok);
    if (k == "rank") return parseRank(tok);
    return error("unknown line '" + k + "'");
  }

  Status parseText(const std::string& text) {
    std::istringstream in(text);
    std::string raw;
    while (std::getline(in, raw)) {
      ++line;
      size_t hash = raw.find('#');
      if (hash != std::string::npos) raw.resize(hash);
      std::istringstream words(raw);
      std::vector<std::string> tok;
      for (std::string w; words >> w;) tok.push_back(w);
      if (!tok.empty()) CHORUS_RETURN_IF_ERROR(parseLine(tok));
    }
    return Status::Ok();
  }
};

std::string readWhole(std::ifstream& f) {
  std::stringstream buf;
  buf << f.rdbuf();
  return buf.str();
}

}  // namespace

Status applyEstimates(const std::string& text, const std::string& origin, Topology* t) {
  Topology copy = *t;
  Parser p;
  p.origin = origin;
  p.t = &copy;
  p.estimatesOnly = true;
  if (isJsonTuning(text)) {
    std::vector<EstimateLine> lines;
    CHORUS_RETURN_IF_ERROR(estimateLinesFromJson(text, origin, &lines));
    for (const EstimateLine& l : lines) {
      p.where = l.where;
      CHORUS_RETURN_IF_ERROR(p.parseLine(l.words));
    }
  } else {
    CHORUS_RETURN_IF_ERROR(p.parseText(text));
  }
  *t = std::move(copy);
  return Status::Ok();
}

Status loadEstimatesFile(const std::string& path, Topology* t) {
  std::ifstream f(path);
  if (!f) return Status::FromErrno(errno, "cannot open tuning file " + path);
  return applyEstimates(readWhole(f), path, t);
}

Status parseTopology(const std::string& text, const std::string& origin, Topology* out) {
  Topology t;
  Parser p;
  p.origin = origin;
  p.t = &t;
  CHORUS_RETURN_IF_ERROR(p.parseText(text));
  if (p.inHost) return p.error("host block '" + p.host.name + "' has no 'end'");
  if (t.hosts.empty()) return Status::InvalidArgument(origin + ": no host block");
  if (!p.sawRanks) placeRanksPerGpu(&t);
  t.source = origin;
  *out = std::move(t);
  return Status::Ok();
}

Status loadTopologyFile(const std::string& path, Topology* out) {
  std::ifstream f(path);
  if (!f) return Status::FromErrno(errno, "cannot open topology file " + path);
  std::string text = readWhole(f);
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '<') {
    Topology t;
    Host h;
    std::string notes;
    CHORUS_RETURN_IF_ERROR(probeHwlocXml(path, &h, &notes));
    t.hosts.push_back(std::move(h));
    placeRanksPerGpu(&t);
    t.source = path;
    *out = std::move(t);
    return Status::Ok();
  }
  return parseTopology(text, path, out);
}

Status saveTopologyFile(const Topology& t, const std::string& path) {
  std::ofstream f(path, std::ios::trunc);
  if (!f) return Status::FromErrno(errno, "cannot write topology file " + path);
  f << "# Chorus topology (docs/topology.md), from " << (t.source.empty() ? "memory" : t.source)
    << "\n"
    << formatTopology(t);
  f.flush();
  if (!f) return Status::FromErrno(errno, "writing topology file " + path);
  return Status::Ok();
}

}  // namespace chorus::topo
