// The views chorus-topo offers of a Topology. Each returns text; main.cc decides where it goes.
#pragma once

#include <string>

#include "topo/topology.h"

namespace chorus::topo {

struct RenderOptions {
  int maxHosts = 2;   // hosts drawn or printed in full; identical ones are summarised anyway
  std::string notes;  // what discovery said, printed under the tree
};

std::string renderTree(const Topology& t, const RenderOptions& o);
std::string renderJson(const Topology& t);
std::string renderDot(const Topology& t, const RenderOptions& o);
// Which transport and algorithm class Chorus would use between ranks, and why.
std::string explainTopology(const Topology& t);

}  // namespace chorus::topo
