// TCP socket helpers shared by the bootstrap and the TCP transport: addresses (IPv4 and IPv6),
// interface selection, and bounded blocking-style I/O on non-blocking sockets. Every call
// that can wait takes a Deadline; none raises SIGPIPE (MSG_NOSIGNAL everywhere).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "chorus/status.h"
#include "common/clock.h"

namespace chorus {

struct SockAddr {
  sockaddr_storage storage{};
  socklen_t len = 0;

  bool valid() const { return len != 0; }
  int family() const { return storage.ss_family; }
  int port() const;
  void setPort(int port);
  const sockaddr* sa() const { return reinterpret_cast<const sockaddr*>(&storage); }
  sockaddr* sa() { return reinterpret_cast<sockaddr*>(&storage); }
  // "10.0.0.1" or "fe80::1%eth0" (no port, no brackets).
  std::string host() const;
  // 127.0.0.0/8, ::1, or an IPv4-mapped 127.x address: only this host can connect to it.
  bool isLoopback() const;
  // "10.0.0.1:29500" or "[fe80::1]:29500".
  std::string toString() const;
  // The wildcard address of `family` (INADDR_ANY / in6addr_any) on `port`.
  static SockAddr any(int family, int port);
};

// Resolves a numeric address or a host name (the first result, IPv4 preferred). `host` may
// be bracketed ("[::1]") and may carry an IPv6 scope ("fe80::1%eth0").
Status resolveHost(const std::string& host, int port, SockAddr* out);
// Parses "host:port", "[v6addr]:port" (and a bare "v6addr" is rejected: use brackets).
Status parseHostPort(const std::string& text, SockAddr* out);

// Interface selection, shared by every TCP user. `spec` is CHORUS_SOCKET_IFNAME's syntax:
// "eth,ib" = names starting with eth or ib; "=eth0,eth1" = exactly these names; "^docker,lo"
// = every name except those starting so; "^=eth0" = every name except exactly these.
bool interfaceMatches(const std::string& spec, const std::string& name);

struct NetInterface {
  std::string name;
  SockAddr addr;
};

// Up to `maxCount` usable interfaces. With a spec: those matching it, IPv4 first, then global
// IPv6, then link-local IPv6. Without one (empty spec): up, non-loopback, non-virtual-bridge
// IPv4 interfaces, else loopback 127.0.0.1. An empty result with a spec is an error that
// lists what exists.
Status findInterfaces(const std::string& spec, size_t maxCount, std::vector<NetInterface>* out);
// The same, limited to one address family (AF_INET or AF_INET6; AF_UNSPEC = no limit). Without
// a spec and with AF_INET6: up, non-loopback, non-bridge IPv6 (global first), else ::1.
Status findInterfaces(const std::string& spec, int family, size_t maxCount,
                      std::vector<NetInterface>* out);
// "4", "ipv4", "inet", "AF_INET" -> AF_INET; the same with 6 -> AF_INET6; "" or "any" ->
// AF_UNSPEC (CHORUS_SOCKET_FAMILY's syntax). false if `text` is none of these.
bool parseFamily(const std::string& text, int* family);

// Owns one file descriptor; closes it on destruction.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& o) noexcept : fd_(o.release()) {}
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { reset(); }

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();
  void reset();

 private:
  int fd_ = -1;
};

// A non-blocking listening socket with SO_REUSEADDR (and IPV6_V6ONLY off for "::").
Status listenOn(const SockAddr& addr, int backlog, Socket* out);
// A socket bound to `addr` (port 0: the kernel picks one) but not listening: the port is
// reserved while connections to it are refused, until the owner calls listen() on it.
Status bindOnly(const SockAddr& addr, Socket* out);
Status localAddress(int fd, SockAddr* out);

// One non-blocking accept. `*got` is false when no connection is waiting. On failure
// `*failedErrno` (when given) says why, so callers can tell exhaustion (AcceptBackoff) apart.
Status acceptOne(int listenFd, Socket* out, SockAddr* peer, bool* got, int* failedErrno = nullptr);

// Connects to `addr`, retrying with exponential backoff (refused, unreachable, timed out...)
// until `deadline`. On failure (a Timeout) `*lastErrno` holds the last attempt's error.
Status connectWithRetry(const SockAddr& addr, Deadline deadline, Socket* out, int* lastErrno);

// Waits for `events` on fd until deadline; `*revents` is 0 on timeout.
Status pollOne(int fd, short events, Deadline deadline, short* revents);

// Whole-buffer I/O on a non-blocking socket. A closed connection is RemoteError, a missed
// deadline Timeout, anything else SystemError with errno text.
Status sendAll(int fd, const void* data, size_t bytes, Deadline deadline);
Status recvAll(int fd, void* data, size_t bytes, Deadline deadline);

// Framing: a 12-byte header (magic, type, payload length; little-endian) then the payload.
// The magic catches strangers and desynchronised streams on the first bytes.
inline constexpr uint32_t kFrameMagic = 0x52464843;  // "CHFR"
inline constexpr size_t kFrameHeaderBytes = 12;

struct Frame {
  uint32_t type = 0;
  std::vector<uint8_t> payload;
};

Status sendFrame(int fd, uint32_t type, const void* payload, size_t bytes, Deadline deadline);

// Incremental reader for one connection: reads whatever is available without blocking and
// hands out complete frames, so one thread can serve many sockets with poll().
class FrameReader {
 public:
  explicit FrameReader(uint32_t maxPayload = 1u << 30) : maxPayload_(maxPayload) {}
  // Reads what the socket has now. `*closed` becomes true at EOF.
  Status readAvailable(int fd, bool* closed);
  // Takes the next buffered frame; `*got` false if none is complete. A bad header is an error.
  Status next(Frame* frame, bool* got);
  size_t buffered() const { return buf_.size() - start_; }
  uint32_t maxPayload() const { return maxPayload_; }

 private:
  uint32_t maxPayload_;
  std::vector<uint8_t> buf_;
  size_t start_ = 0;
};

// Blocks (poll) until `reader` yields one frame from fd, or the deadline passes.
Status recvFrame(int fd, FrameReader* reader, Deadline deadline, Frame* frame);

}  // namespace chorus
