#include "core/comm_internals.h"

#include "core/comm_impl.h"

namespace chorus {

const Config& CommInternals::config(const Communicator& c) {
  return c.impl_->config;
}

const topo::Topology& CommInternals::topology(const Communicator& c) {
  return c.impl_->topology;
}

const RankLayout& CommInternals::layout(const Communicator& c) {
  return c.impl_->layout;
}

const CostParams& CommInternals::costParams(const Communicator& c) {
  return c.impl_->costParams;
}

std::string CommInternals::transportName(const Communicator& c) {
  return c.impl_->transportNames.empty() ? "none" : c.impl_->transportNames;
}

std::vector<std::pair<OpDesc, std::string>> CommInternals::plannedAlgorithms(
    const Communicator& c) {
  std::vector<std::pair<OpDesc, std::string>> out;
  for (const auto& [desc, plan] : c.impl_->plans) out.emplace_back(desc, plan.schedule.algorithm);
  return out;
}

}  // namespace chorus
