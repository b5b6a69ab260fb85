#include "transport/rails.h"

#include <sched.h>

#include <algorithm>

#include "topo/probe.h"

namespace chorus {

size_t chooseRail(const std::vector<int>& nicNuma, int myNuma, int localIndex) {
  std::vector<size_t> nearest;
  if (myNuma >= 0)
    for (size_t k = 0; k < nicNuma.size(); ++k)
      if (nicNuma[k] == myNuma) nearest.push_back(k);
  if (nearest.empty())  // none on my node, or nobody knows: all are as near
    for (size_t k = 0; k < nicNuma.size(); ++k) nearest.push_back(k);
  return nearest[size_t(localIndex < 0 ? 0 : localIndex) % nearest.size()];
}

int currentNumaNode() {
  unsigned cpu = 0, node = 0;
  return getcpu(&cpu, &node) == 0 ? int(node) : -1;
}

Status findRailInterface(const std::string& spec, int family, int localIndex, NetInterface* out,
                         std::vector<std::string>* rails) {
  std::vector<NetInterface> found;
  CHORUS_RETURN_IF_ERROR(findInterfaces(spec, family, spec.empty() ? 1 : 64, &found));
  // One address per interface: findInterfaces lists an interface's preferred address first.
  std::vector<NetInterface> ifs;
  for (const NetInterface& f : found) {
    bool seen = false;
    for (const NetInterface& i : ifs) seen |= i.name == f.name;
    if (!seen) ifs.push_back(f);
  }
  // In name order, so that rail i is the same interface on every host that names them alike.
  std::stable_sort(ifs.begin(), ifs.end(),
                   [](const NetInterface& a, const NetInterface& b) { return a.name < b.name; });
  std::vector<int> numa;
  rails->clear();
  for (const NetInterface& i : ifs) {
    numa.push_back(topo::netNumaNode(i.name));
    rails->push_back(i.name);
  }
  *out = ifs[chooseRail(numa, currentNumaNode(), localIndex)];
  return Status::Ok();
}

std::string railNote(const std::vector<std::string>& rails, int localIndex) {
  std::string s = "; rails";
  for (size_t k = 0; k < rails.size(); ++k) {
    s += k ? ", " : " ";
    s += rails[k];
  }
  s += " (local rank " + std::to_string(localIndex) + ")";
  return s;
}

int localIndexOf(const std::vector<int>& hostOf, int rank) {
  int index = 0;
  for (int q = 0; q < rank; ++q) index += hostOf[size_t(q)] == hostOf[size_t(rank)];
  return index;
}

}  // namespace chorus
