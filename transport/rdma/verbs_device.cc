#if defined(CHORUS_HAVE_IBVERBS)
#include "transport/rdma/verbs_device.h"

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/log.h"
#include "topo/probe.h"
#include "transport/rails.h"
#include "transport/rdma/ib_hca.h"
#include "transport/rdma/verbs_gid.h"
#include "transport/rdma/verbs_params.h"

namespace chorus {

namespace {

std::string errnoText(int err) {
  const char* name = strerrorname_np(err);
  return "errno " + (name ? std::string(name) : std::to_string(err)) + ": " + strerror(err);
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& s : parts) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string where(const VerbsPort& p) {
  return p.device + ":" + std::to_string(p.port);
}

// Takes the GID of RoCE port `p`; false, with a note saying why, when it has no usable one.
bool pickGid(const VerbsLibrary& lib, ibv_device* dev, const RdmaNicOptions& o, VerbsPort* p,
             std::vector<std::string>* notes) {
  std::string portDir = gidPortDir(dev->ibdev_path, p->port);
  int len = p->portAttr.gid_tbl_len;
  if (o.ibGidIndex >= 0) {
    if (o.ibGidIndex >= len) {
      notes->push_back(where(*p) + ": CHORUS_IB_GID_INDEX=" + std::to_string(o.ibGidIndex) +
                       " is past its GID table of " + std::to_string(len) + " entries");
      return false;
    }
    p->gidIndex = o.ibGidIndex;
    if (lib.queryGid(p->context, p->port, p->gidIndex, &p->gid) != 0 || gidIsZero(p->gid.raw)) {
      notes->push_back(where(*p) + ": GID index " + std::to_string(p->gidIndex) +
                       " is empty (list the GIDs with `show_gids` or in " + portDir + "/gids)");
      return false;
    }
  } else {
    std::vector<RoceGid> table;
    for (int i = 0; i < len; ++i) {
      RoceGid g;
      g.index = i;
      ibv_gid gid;
      if (lib.queryGid(p->context, p->port, i, &gid) != 0 || gidIsZero(gid.raw)) continue;
      std::memcpy(g.gid, gid.raw, 16);
      g.type = readGidType(portDir, i);
      table.push_back(g);
    }
    p->gidIndex = chooseRoceGid(table);
    if (p->gidIndex < 0) {
      notes->push_back(where(*p) + ": RoCE port without any GID (does its network interface " +
                       "have an IP address?)");
      return false;
    }
    for (const RoceGid& g : table)
      if (g.index == p->gidIndex) std::memcpy(p->gid.raw, g.gid, 16);
  }
  std::string type = readGidType(portDir, p->gidIndex);
  if (o.ibGidIndex < 0 && (type != "RoCE v2" || !gidIsIpv4Mapped(p->gid.raw)))
    LOG_INFO(kLogNet, "verbs: %s has no RoCE v2 GID with an IPv4 address; using GID %d (%s)",
             where(*p).c_str(), p->gidIndex, type.empty() ? "type unknown" : type.c_str());
  p->address = (type.empty() ? "RoCE" : type) + ", GID " + std::to_string(p->gidIndex) + " " +
               gidText(p->gid.raw);
  return true;
}

// Takes the first port of the open device in `p` that `rule` allows and that is up; false,
// with notes saying why each was passed over, when there is none.
bool choosePort(const VerbsLibrary& lib, ibv_device* dev, const IbHcaRule& rule,
                const RdmaNicOptions& o, VerbsPort* p, std::vector<std::string>* notes) {
  bool anyAllowed = false;
  for (int port = 1; port <= p->deviceAttr.phys_port_cnt; ++port) {
    if (!rule.allows(p->device, port)) continue;
    anyAllowed = true;
    p->port = port;
    if (lib.queryPort(p->context, port, &p->portAttr) != 0) {
      notes->push_back(where(*p) + ": ibv_query_port failed (" + errnoText(errno) + ")");
      continue;
    }
    if (p->portAttr.state != IBV_PORT_ACTIVE) {
      notes->push_back(where(*p) + " is " + lib.portStateText(p->portAttr.state) + ", not ACTIVE");
      continue;
    }
    p->roce = p->portAttr.link_layer == IBV_LINK_LAYER_ETHERNET;
    if (p->roce) {
      if (pickGid(lib, dev, o, p, notes)) return true;
      continue;
    }
    if (p->portAttr.lid == 0) {
      notes->push_back(where(*p) + ": InfiniBand port without a LID (is a subnet manager " +
                       "running? `sminfo` tells)");
      continue;
    }
    // InfiniBand is addressed by LID; GID 0 (the port GUID) only goes into logs.
    p->gidIndex = 0;
    if (lib.queryGid(p->context, port, 0, &p->gid) != 0) p->gid = ibv_gid{};
    p->address = "InfiniBand, LID " + std::to_string(p->portAttr.lid);
    return true;
  }
  if (!anyAllowed) notes->push_back(p->device + ": CHORUS_IB_HCA allows none of its ports");
  return false;
}

}  // namespace

Status openVerbsPort(const VerbsLibrary& lib, const RdmaNicOptions& options, VerbsPort* out) {
  IbHcaRule rule;
  CHORUS_RETURN_IF_ERROR(parseIbHca(options.ibHca, &rule));
  errno = 0;
  int n = 0;
  ibv_device** list = lib.getDeviceList(&n);
  if (!list)
    return Status::Unsupported("libibverbs: ibv_get_device_list found no RDMA device (" +
                               errnoText(errno ? errno : ENODEV) +
                               "); use CHORUS_NET=socket or install/enable the NIC's driver");
  std::vector<std::string> names, notes;
  std::vector<VerbsPort> usable;  // each with its device open
  for (int i = 0; i < n; ++i) {
    VerbsPort p;
    p.device = lib.getDeviceName(list[i]);
    names.push_back(p.device);
    if (!rule.allowsDevice(p.device)) continue;
    p.context = lib.openDevice(list[i]);
    if (!p.context) {
      notes.push_back(p.device + ": ibv_open_device failed (" + errnoText(errno) + ")");
      continue;
    }
    if (lib.queryDevice(p.context, &p.deviceAttr) != 0) {
      notes.push_back(p.device + ": ibv_query_device failed (" + errnoText(errno) + ")");
    } else if (choosePort(lib, list[i], rule, options, &p, &notes)) {
      usable.push_back(p);
      continue;
    }
    lib.closeDevice(p.context);
  }
  if (!usable.empty()) {
    // Several usable devices are rails: the rank takes the nearest, spread by its place.
    std::vector<int> numa;
    for (const VerbsPort& p : usable) numa.push_back(topo::ibNumaNode(p.device));
    const size_t k = chooseRail(numa, currentNumaNode(), options.localIndex);
    for (size_t j = 0; j < usable.size(); ++j)
      if (j != k) lib.closeDevice(usable[j].context);
    lib.freeDeviceList(list);  // an open context outlives the list
    *out = usable[k];
    const std::string rail = usable.size() > 1 ? ", rail " + std::to_string(k + 1) + " of " +
                                                     std::to_string(usable.size()) + " devices"
                                               : "";
    LOG_INFO(kLogNet, "verbs: using %s (%s), port MTU %d%s", where(*out).c_str(),
             out->address.c_str(), verbsMtuBytes(out->portAttr.active_mtu), rail.c_str());
    return Status::Ok();
  }
  lib.freeDeviceList(list);
  if (n == 0)
    return Status::Unsupported(
        "libibverbs: ibv_get_device_list found no RDMA device (the list is empty: no RDMA driver "
        "is bound to a NIC, `ibv_devices` shows the same); use CHORUS_NET=socket or "
        "install/enable the NIC's driver");
  std::string rulePart = options.ibHca.empty() ? "" : " with CHORUS_IB_HCA='" + options.ibHca + "'";
  if (notes.empty())
    return Status::Unsupported("libibverbs: CHORUS_IB_HCA='" + options.ibHca +
                               "' allows none of the RDMA devices here (" + join(names, ", ") +
                               "); fix or unset it, or use CHORUS_NET=socket");
  return Status::Unsupported("libibverbs: no usable RDMA port among " + join(names, ", ") +
                             rulePart + ": " + join(notes, "; ") +
                             "; check the links (`ibv_devinfo`, `ibstat`), choose another port "
                             "with CHORUS_IB_HCA, or use CHORUS_NET=socket");
}

}  // namespace chorus
#endif
