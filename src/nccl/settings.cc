#include "nccl/settings.h"

#include <cstring>

namespace chorus::nccl {

namespace {

constexpr unsigned kConfigMagic = 0xcafebeef;

// Copies what the caller's struct really holds into a fully defaulted one.
Status readUserConfig(const ncclConfig_t* user, ncclConfig_t* cfg) {
  size_t userSize = 0;
  memcpy(&userSize, user, sizeof userSize);
  if (userSize < offsetof(ncclConfig_t, blocking))
    return Status::InvalidArgument("ncclConfig_t has size " + std::to_string(userSize) +
                                   ": it was not set up with NCCL_CONFIG_INITIALIZER");
  memcpy(static_cast<void*>(cfg), user, userSize < sizeof *cfg ? userSize : sizeof *cfg);
  if (cfg->magic != kConfigMagic)
    return Status::InvalidArgument(
        "ncclConfig_t was not initialised with NCCL_CONFIG_INITIALIZER (bad magic)");
  return Status::Ok();
}

// The NCCL release that introduced each group of fields; older callers get defaults.
void resetNewerFields(ncclConfig_t* cfg) {
  const ncclConfig_t d = NCCL_CONFIG_INITIALIZER;
  unsigned v = cfg->version;
  if (v < unsigned(NCCL_VERSION(2, 14, 0))) cfg->blocking = d.blocking;
  if (v < unsigned(NCCL_VERSION(2, 17, 0))) {
    cfg->cgaClusterSize = d.cgaClusterSize;
    cfg->minCTAs = d.minCTAs;
    cfg->maxCTAs = d.maxCTAs;
    cfg->netName = d.netName;
  }
  if (v < unsigned(NCCL_VERSION(2, 25, 0))) cfg->trafficClass = d.trafficClass;
  if (v < unsigned(NCCL_VERSION(2, 27, 0))) {
    cfg->collnetEnable = d.collnetEnable;
    cfg->CTAPolicy = d.CTAPolicy;
    cfg->shrinkShare = d.shrinkShare;
    cfg->nvlsCTAs = d.nvlsCTAs;
  }
  if (v < unsigned(NCCL_VERSION(2, 28, 0))) {
    cfg->nChannelsPerNetPeer = d.nChannelsPerNetPeer;
    cfg->nvlinkCentricSched = d.nvlinkCentricSched;
  }
}

bool undefOr(int v, int lo, int hi) {
  return v == NCCL_CONFIG_UNDEF_INT || (v >= lo && v <= hi);
}

Status badField(const char* name, int v, const char* allowed) {
  return Status::InvalidArgument("ncclConfig_t." + std::string(name) + " = " + std::to_string(v) +
                                 " is invalid (" + allowed + ")");
}

Status checkFields(const ncclConfig_t& c) {
  if (!undefOr(c.blocking, 0, 1)) return badField("blocking", c.blocking, "0 or 1");
  if (!undefOr(c.cgaClusterSize, 0, 8)) return badField("cgaClusterSize", c.cgaClusterSize, "0..8");
  if (!undefOr(c.minCTAs, 1, 1 << 16)) return badField("minCTAs", c.minCTAs, ">= 1");
  if (!undefOr(c.maxCTAs, 1, 1 << 16)) return badField("maxCTAs", c.maxCTAs, ">= 1");
  if (c.minCTAs != NCCL_CONFIG_UNDEF_INT && c.maxCTAs != NCCL_CONFIG_UNDEF_INT &&
      c.minCTAs > c.maxCTAs)
    return badField("minCTAs", c.minCTAs, "must not exceed maxCTAs");
  if (!undefOr(c.splitShare, 0, 1)) return badField("splitShare", c.splitShare, "0 or 1");
  if (!undefOr(c.collnetEnable, 0, 1)) return badField("collnetEnable", c.collnetEnable, "0 or 1");
  if (!undefOr(c.CTAPolicy, 0, 0x3)) return badField("CTAPolicy", c.CTAPolicy, "NCCL_CTA_POLICY_*");
  if (!undefOr(c.shrinkShare, 0, 1)) return badField("shrinkShare", c.shrinkShare, "0 or 1");
  if (!undefOr(c.nvlsCTAs, 0, 1 << 16)) return badField("nvlsCTAs", c.nvlsCTAs, ">= 0");
  return Status::Ok();
}

}  // namespace

Status parseConfig(const ncclConfig_t* user, CommSettings* out) {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  if (user) {
    CHORUS_RETURN_IF_ERROR(readUserConfig(user, &cfg));
    resetNewerFields(&cfg);
    CHORUS_RETURN_IF_ERROR(checkFields(cfg));
  }
  CommSettings s;
  CHORUS_RETURN_IF_ERROR(Config::fromEnvironment(&s.core, Config::Names::ChorusThenNccl));
  // NCCL_COMM_BLOCKING is NCCL's default for configs that leave `blocking` undefined.
  s.blocking = cfg.blocking == NCCL_CONFIG_UNDEF_INT ? s.core.ncclCommBlocking : cfg.blocking == 1;
  if (cfg.commName) s.commName = cfg.commName;
  *out = std::move(s);
  return Status::Ok();
}

Status childSettings(const CommSettings& parent, const ncclConfig_t* user, CommSettings* out) {
  if (!user) {
    *out = parent;
    return Status::Ok();
  }
  return parseConfig(user, out);
}

}  // namespace chorus::nccl
