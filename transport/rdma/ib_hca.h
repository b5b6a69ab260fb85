// CHORUS_IB_HCA (NCCL_IB_HCA): which RDMA devices and ports the verbs provider may use, in
// NCCL's syntax. A comma-separated list of `device[:port]`; a leading `^` makes it a list of
// what to leave out, and a `=` after it (or leading, without `^`) makes the names exact, where
// otherwise each is a prefix ("mlx5" matches mlx5_0 and mlx5_1). Examples:
//   mlx5             every port of every device whose name starts with mlx5
//   =mlx5_0:1,mlx5_1:1   port 1 of exactly mlx5_0 and mlx5_1
//   ^=mlx5_1,mlx5_4  everything but mlx5_1 and mlx5_4
// Empty: everything.
#pragma once

#include <string>
#include <vector>

#include "chorus/status.h"

namespace chorus {

struct IbHcaRule {
  struct Entry {
    std::string name;
    int port = -1;  // -1: every port
  };
  bool exclude = false;  // `^`: the entries name what may not be used
  bool exact = false;    // `=`: names match whole, not as prefixes
  std::vector<Entry> entries;

  // Whether some port of `device` may be used (so the device is worth opening).
  bool allowsDevice(const std::string& device) const;
  bool allows(const std::string& device, int port) const;

 private:
  bool nameMatches(const Entry& e, const std::string& device) const;
};

// Parses `text`; InvalidArgument naming the bad entry when it is malformed. `source` names
// the setting in messages ("CHORUS_IB_HCA").
Status parseIbHca(const std::string& text, IbHcaRule* out, const char* source = "CHORUS_IB_HCA");

}  // namespace chorus
