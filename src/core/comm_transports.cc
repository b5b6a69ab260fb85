// Communicator set-up, the transport part: which host each rank is on and the settings that
// must agree, in one exchange; then a transport per pair of ranks from the registry, and the
// executor's connections.
#include <unistd.h>

#include <cstring>
#include <string>

#include "bootstrap/wire.h"
#include "common/log.h"
#include "common/rank_list.h"
#include "core/comm_impl.h"
#include "topo/probe.h"
#include "transport/registry.h"

namespace chorus {

namespace {

// What every rank tells the others about itself at start-up.
struct PeerInfo {
  char host[200];
  int32_t pid;
  char settings[400];    // CHORUS_TRANSPORT and each transport's mustAgree(), which must match
  uint8_t recovery[24];  // where its recovery listener is (bootstrap wire address encoding)
  uint32_t opens;        // the transports it can open (JobShape::opens)
};

std::string agreedSettings(const Config& config) {
  std::string s = "CHORUS_TRANSPORT=" + config.transport +
                  " CHORUS_CHECK_CALLS=" + std::to_string(config.checkCalls);
  for (const TransportEntry& e : registeredTransports()) s += " " + e.mustAgree(config);
  return s;
}

}  // namespace

Status Communicator::Impl::exchangeHosts(Deadline deadline, JobShape* job) {
  PeerInfo me{};
  std::string host = config.hostId.empty() ? topo::defaultHostId() : config.hostId;
  snprintf(me.host, sizeof me.host, "%s", host.c_str());
  me.pid = getpid();
  SockAddr recoveryAt;
  if (localAddress(recoveryListener.fd(), &recoveryAt).ok()) {
    boot::Writer w;
    w.addr(recoveryAt);
    memcpy(me.recovery, w.buffer().data(), sizeof me.recovery);
  }
  me.opens = transportsThisRankOpens(config, rank);
  const std::string mine = agreedSettings(config);
  snprintf(me.settings, sizeof me.settings, "%s", mine.c_str());
  std::vector<PeerInfo> all(static_cast<size_t>(size));
  CHORUS_RETURN_IF_ERROR(bootstrap->allgather(&me, sizeof me, all.data(), deadline));
  job->hostOf.assign(size_t(size), -1);
  job->opens.assign(size_t(size), 0);
  recoveryAddrs.assign(size_t(size), SockAddr());
  for (int q = 0; q < size; ++q) {
    const PeerInfo& p = all[size_t(q)];
    job->opens[size_t(q)] = p.opens;
    boot::Reader rd(p.recovery, sizeof p.recovery);
    (void)rd.addr(&recoveryAddrs[size_t(q)]);
    if (strncmp(p.settings, me.settings, sizeof me.settings) != 0)
      return Status::InvalidArgument(
          "configuration differs between ranks: rank " + std::to_string(q) + " has " +
          std::string(p.settings, strnlen(p.settings, sizeof p.settings)) + ", rank " +
          std::to_string(rank) + " has " + mine + "; set these alike on every rank");
    for (int r = 0; r <= q; ++r) {
      if (strncmp(all[size_t(r)].host, p.host, sizeof me.host) == 0) {
        job->hostOf[size_t(q)] = r;
        break;
      }
    }
  }
  return Status::Ok();
}

Status Communicator::Impl::connectTransports(Deadline deadline, ExecEnv* env) {
  JobShape job;
  CHORUS_RETURN_IF_ERROR(exchangeHosts(deadline, &job));
  const std::vector<TransportEntry>& entries = registeredTransports();
  TransportChoice choice;
  CHORUS_RETURN_IF_ERROR(chooseTransports(entries, job, rank, config, MemoryKind::Host, &choice));
  env->conns.assign(size_t(size), nullptr);
  env->transportOf.assign(size_t(size), nullptr);
  env->maxChunkBytesOf.assign(size_t(size), 0);
  env->chunkBytes = choice.chunkBytes;
  costParams.chunkBytes = choice.chunkBytes;
  costParams.windowChunks = config.shmSlots;
  for (size_t k = 0; k < entries.size(); ++k) {
    if (!choice.used[k]) continue;  // no pair anywhere: no rank makes it
    TransportContext ctx;
    ctx.bootstrap = bootstrap.get();
    ctx.config = &config;
    ctx.job = &job;
    ctx.peers.assign(size_t(size), false);
    std::vector<int> mine;
    for (int q = 0; q < size; ++q)
      if (choice.of[size_t(q)] == int(k)) ctx.peers[size_t(q)] = true, mine.push_back(q);
    ctx.chunkBytes = choice.chunkBytes;
    ctx.doorbell = &doorbell;
    ctx.onError = [this](const Status& st) { transportFailed(st); };
    ctx.failed = &failed;
    ctx.deadline = deadline;
    std::unique_ptr<Transport> t;
    CHORUS_RETURN_IF_ERROR(entries[k].create(ctx, &t));
    for (int q : mine) {
      env->conns[size_t(q)] = t->connection(q);
      env->transportOf[size_t(q)] = t.get();
      env->maxChunkBytesOf[size_t(q)] = t->maxPayloadBytes();
      if (!env->conns[size_t(q)])
        return Status::Internal(std::string(entries[k].name) + " was chosen for rank " +
                                std::to_string(q) + " but made no connection to it");
    }
    if (!mine.empty())
      LOG_INFO(kLogInit, "rank %d: %s to rank%s %s (priority %d, the highest that reaches them)",
               rank, entries[k].name, mine.size() > 1 ? "s" : "", rankList(mine).c_str(),
               entries[k].priority);
    if (!mine.empty())
      transportNames += (transportNames.empty() ? "" : "+") + std::string(t->name());
    transports.push_back(std::move(t));
  }
  return Status::Ok();
}

}  // namespace chorus
