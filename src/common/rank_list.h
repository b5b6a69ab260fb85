// Ranks written as ranges for messages and the log: "1-3,7".
#pragma once

#include <string>
#include <vector>

namespace chorus {

// `ranks` in ascending order.
std::string rankList(const std::vector<int>& ranks);

}  // namespace chorus
