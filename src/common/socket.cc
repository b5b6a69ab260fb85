#include "common/socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <thread>

namespace chorus {

// ---- addresses ----

int SockAddr::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  if (family() == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  return 0;
}

void SockAddr::setPort(int port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(port);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(port);
}

bool SockAddr::isLoopback() const {
  if (family() == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr.s_addr) >> 24) == 127;
  if (family() != AF_INET6) return false;
  const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr;
  return IN6_IS_ADDR_LOOPBACK(&a) || (IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127);
}

std::string SockAddr::host() const {
  char buf[NI_MAXHOST] = "?";
  if (valid()) getnameinfo(sa(), len, buf, sizeof buf, nullptr, 0, NI_NUMERICHOST);
  return buf;
}

std::string SockAddr::toString() const {
  std::string out = family() == AF_INET6 ? std::string("[").append(host()).append("]") : host();
  return out.append(":").append(std::to_string(port()));
}

SockAddr SockAddr::any(int family, int port) {
  SockAddr a;
  if (family == AF_INET6) {
    auto* s = reinterpret_cast<sockaddr_in6*>(&a.storage);
    s->sin6_family = AF_INET6;
    s->sin6_addr = in6addr_any;
    a.len = sizeof(sockaddr_in6);
  } else {
    auto* s = reinterpret_cast<sockaddr_in*>(&a.storage);
    s->sin_family = AF_INET;
    s->sin_addr.s_addr = htonl(INADDR_ANY);
    a.len = sizeof(sockaddr_in);
  }
  a.setPort(port);
  return a;
}

Status resolveHost(const std::string& hostIn, int port, SockAddr* out) {
  std::string host = hostIn;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty()) return Status::InvalidArgument("empty host name");
  if (port < 0 || port > 65535)
    return Status::InvalidArgument("port " + std::to_string(port) + " out of range [0, 65535]");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0)
    return Status::InvalidArgument("cannot resolve host '" + host + "': " + gai_strerror(rc));
  const addrinfo* pick = res;
  for (const addrinfo* p = res; p; p = p->ai_next)
    if (p->ai_family == AF_INET) {
      pick = p;
      break;
    }  // IPv4 first: it is what most jobs use
  memcpy(&out->storage, pick->ai_addr, pick->ai_addrlen);
  out->len = pick->ai_addrlen;
  out->setPort(port);
  freeaddrinfo(res);
  return Status::Ok();
}

Status parseHostPort(const std::string& text, SockAddr* out) {
  std::string host, port;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return Status::InvalidArgument("'" + text + "' is not [ipv6-address]:port");
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos || text.find(':') != colon)
      return Status::InvalidArgument("'" + text +
                                     "' is not host:port (write IPv6 addresses as [addr]:port)");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  char* end = nullptr;
  long p = strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535)
    return Status::InvalidArgument("'" + text + "': port '" + port + "' is not in [0, 65535]");
  return resolveHost(host, int(p), out).withContext("'" + text + "'");
}

// ---- interfaces ----

bool interfaceMatches(const std::string& specIn, const std::string& name) {
  std::string spec = specIn;
  bool exclude = !spec.empty() && spec[0] == '^';
  if (exclude) spec.erase(0, 1);
  bool exact = !spec.empty() && spec[0] == '=';
  if (exact) spec.erase(0, 1);
  bool listed = false;
  size_t pos = 0;
  while (pos <= spec.size() && !listed) {
    size_t comma = std::min(spec.find(',', pos), spec.size());
    std::string item = spec.substr(pos, comma - pos);
    if (!item.empty()) listed = exact ? name == item : name.compare(0, item.size(), item) == 0;
    pos = comma + 1;
  }
  return exclude ? !listed : listed;
}

namespace {

// 0 = IPv4, 1 = global IPv6, 2 = link-local IPv6: lower is preferred.
int addressRank(const sockaddr* sa) {
  if (sa->sa_family == AF_INET) return 0;
  auto* s6 = reinterpret_cast<const sockaddr_in6*>(sa);
  return IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr) ? 2 : 1;
}

bool isVirtualBridge(const std::string& name) {
  return interfaceMatches("docker,veth,virbr,br-", name);
}

SockAddr fromIfaddr(const ifaddrs* ifa) {
  SockAddr a;
  a.len = ifa->ifa_addr->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  memcpy(&a.storage, ifa->ifa_addr, a.len);
  return a;
}

}  // namespace

Status findInterfaces(const std::string& spec, size_t maxCount, std::vector<NetInterface>* out) {
  return findInterfaces(spec, AF_UNSPEC, maxCount, out);
}

bool parseFamily(const std::string& text, int* family) {
  std::string t;
  for (char c : text) t += char(tolower(static_cast<unsigned char>(c)));
  if (t.empty() || t == "any" || t == "af_unspec")
    *family = AF_UNSPEC;
  else if (t == "4" || t == "ipv4" || t == "inet" || t == "af_inet")
    *family = AF_INET;
  else if (t == "6" || t == "ipv6" || t == "inet6" || t == "af_inet6")
    *family = AF_INET6;
  else
    return false;
  return true;
}

Status findInterfaces(const std::string& spec, int family, size_t maxCount,
                      std::vector<NetInterface>* out) {
  out->clear();
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return Status::FromErrno(errno, "getifaddrs");
  std::vector<std::pair<int, NetInterface>> found;
  std::string seen;
  for (const ifaddrs* ifa = list; ifa; ifa = ifa->ifa_next) {
    if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP)) continue;
    int fam = ifa->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    if (family != AF_UNSPEC && fam != family) continue;
    std::string name = ifa->ifa_name;
    if (seen.find(" " + name + " ") == std::string::npos) seen += " " + name + " ";
    bool loop = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
    const int wanted = family == AF_INET6 ? AF_INET6 : AF_INET;
    bool ok = spec.empty() ? fam == wanted && !loop && !isVirtualBridge(name)
                           : interfaceMatches(spec, name);
    if (ok) found.push_back({addressRank(ifa->ifa_addr), {name, fromIfaddr(ifa)}});
  }
  freeifaddrs(list);
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& f : found)
    if (out->size() < maxCount) out->push_back(std::move(f.second));
  if (!out->empty()) return Status::Ok();
  if (!spec.empty())
    return Status::InvalidArgument("CHORUS_SOCKET_IFNAME='" + spec +
                                   "' matches no interface that is up with an IP address; "
                                   "interfaces here:" +
                                   seen);
  NetInterface lo{"lo", {}};
  CHORUS_RETURN_IF_ERROR(resolveHost(family == AF_INET6 ? "::1" : "127.0.0.1", 0, &lo.addr));
  out->push_back(lo);
  return Status::Ok();
}

// ---- sockets ----

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.release();
  }
  return *this;
}

int Socket::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void Socket::reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

namespace {

Status newSocket(int family, Socket* out) {
  int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::FromErrno(errno, "socket()");
  *out = Socket(fd);
  return Status::Ok();
}

void setNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

Status bindOnly(const SockAddr& addr, Socket* out) {
  Socket s;
  CHORUS_RETURN_IF_ERROR(newSocket(addr.family(), &s));
  int zero = 0;
  if (addr.family() == AF_INET6) setsockopt(s.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  if (bind(s.fd(), addr.sa(), addr.len) != 0)
    return Status::FromErrno(errno, "bind to " + addr.toString());
  *out = std::move(s);
  return Status::Ok();
}

Status listenOn(const SockAddr& addr, int backlog, Socket* out) {
  Socket s;
  CHORUS_RETURN_IF_ERROR(newSocket(addr.family(), &s));
  int one = 1, zero = 0;
  setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (addr.family() == AF_INET6) setsockopt(s.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  if (bind(s.fd(), addr.sa(), addr.len) != 0)
    return Status::FromErrno(errno, "bind to " + addr.toString());
  if (listen(s.fd(), backlog) != 0) return Status::FromErrno(errno, "listen on " + addr.toString());
  *out = std::move(s);
  return Status::Ok();
}

Status localAddress(int fd, SockAddr* out) {
  out->len = sizeof out->storage;
  if (getsockname(fd, out->sa(), &out->len) != 0) return Status::FromErrno(errno, "getsockname");
  return Status::Ok();
}

Status acceptOne(int listenFd, Socket* out, SockAddr* peer, bool* got, int* failedErrno) {
  *got = false;
  if (failedErrno) *failedErrno = 0;
  peer->len = sizeof peer->storage;
  int fd = accept4(listenFd, peer->sa(), &peer->len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    // A connection that was reset before we took it is the peer's problem, not ours.
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
      return Status::Ok();
    int err = errno;
    if (failedErrno) *failedErrno = err;
    return Status::FromErrno(err, "accept");
  }
  setNoDelay(fd);
  *out = Socket(fd);
  *got = true;
  return Status::Ok();
}

Status pollOne(int fd, short events, Deadline deadline, short* revents) {
  pollfd p{fd, events, 0};
  for (;;) {
    int rc = poll(&p, 1, deadline.remainingMs());
    if (rc >= 0) break;
    if (errno != EINTR) return Status::FromErrno(errno, "poll");
  }
  *revents = p.revents;
  return Status::Ok();
}

namespace {

// One connect attempt; returns the errno (0 = connected).
int connectOnce(const SockAddr& addr, Deadline attemptDeadline, Socket* out) {
  Socket s;
  if (!newSocket(addr.family(), &s).ok()) return errno ? errno : EMFILE;
  if (connect(s.fd(), addr.sa(), addr.len) != 0) {
    if (errno != EINPROGRESS) return errno;
    short rev = 0;
    if (!pollOne(s.fd(), POLLOUT, attemptDeadline, &rev).ok()) return errno;
    if (rev == 0) return ETIMEDOUT;
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return err;
  }
  setNoDelay(s.fd());
  *out = std::move(s);
  return 0;
}

}  // namespace

Status connectWithRetry(const SockAddr& addr, Deadline deadline, Socket* out, int* lastErrno) {
  int64_t backoffMs = 10;
  int err = ETIMEDOUT;
  while (true) {
    int64_t attemptNs = std::min<int64_t>(deadline.remainingNs(), 10'000'000'000);
    err = connectOnce(addr, Deadline::after(attemptNs / 1e9), out);
    if (err == 0) return Status::Ok();
    if (deadline.expired()) break;
    int64_t sleepMs = std::min<int64_t>(backoffMs, deadline.remainingMs());
    std::this_thread::sleep_for(std::chrono::milliseconds(sleepMs));
    backoffMs = std::min<int64_t>(backoffMs * 2, 1000);
    if (deadline.expired()) break;
  }
  if (lastErrno) *lastErrno = err;
  // The deadline ended the attempts, so this is a timeout whatever the last attempt said: a
  // caller that times out asks who still answers, which names a peer cut off from the network.
  return Status::Timeout(Status::FromErrno(err, "connect to " + addr.toString()).message() +
                         " (retried until the deadline)");
}

Status sendAll(int fd, const void* data, size_t bytes, Deadline deadline) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = send(fd, p, bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      bytes -= size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      if (errno == EPIPE || errno == ECONNRESET)
        return Status::RemoteError(std::string("connection closed by peer (") + strerror(errno) +
                                   ")");
      return Status::FromErrno(errno, "send");
    }
    short rev = 0;
    CHORUS_RETURN_IF_ERROR(pollOne(fd, POLLOUT, deadline, &rev));
    if (rev == 0) return Status::Timeout("send timed out");
  }
  return Status::Ok();
}

Status recvAll(int fd, void* data, size_t bytes, Deadline deadline) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t n = recv(fd, p, bytes, MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      bytes -= size_t(n);
      continue;
    }
    if (n == 0) return Status::RemoteError("connection closed by peer");
    if (errno == EINTR) continue;
    if (errno == ECONNRESET) return Status::RemoteError("connection reset by peer");
    if (errno != EAGAIN && errno != EWOULDBLOCK) return Status::FromErrno(errno, "recv");
    short rev = 0;
    CHORUS_RETURN_IF_ERROR(pollOne(fd, POLLIN, deadline, &rev));
    if (rev == 0) return Status::Timeout("receive timed out");
  }
  return Status::Ok();
}

// ---- framing ----

namespace {

void putLe32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}

uint32_t getLe32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace

Status sendFrame(int fd, uint32_t type, const void* payload, size_t bytes, Deadline deadline) {
  if (bytes > UINT32_MAX) return Status::InvalidArgument("frame payload over 4 GiB");
  // Small frames go out in one send so a frame rarely straddles two TCP segments.
  uint8_t small[kFrameHeaderBytes + 256];
  putLe32(small, kFrameMagic);
  putLe32(small + 4, type);
  putLe32(small + 8, uint32_t(bytes));
  if (bytes <= 256) {
    if (bytes) memcpy(small + kFrameHeaderBytes, payload, bytes);
    return sendAll(fd, small, kFrameHeaderBytes + bytes, deadline);
  }
  CHORUS_RETURN_IF_ERROR(sendAll(fd, small, kFrameHeaderBytes, deadline));
  return sendAll(fd, payload, bytes, deadline);
}

Status FrameReader::readAvailable(int fd, bool* closed) {
  *closed = false;
  if (start_ > 0 && start_ == buf_.size()) {
    buf_.clear();
    start_ = 0;
  }
  for (;;) {
    size_t old = buf_.size();
    buf_.resize(old + 65536);
    ssize_t n = recv(fd, buf_.data() + old, 65536, MSG_DONTWAIT);
    buf_.resize(old + (n > 0 ? size_t(n) : 0));
    if (n > 0) continue;
    if (n == 0) {
      *closed = true;
      return Status::Ok();
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::Ok();
    if (errno == ECONNRESET) {
      *closed = true;
      return Status::Ok();
    }
    return Status::FromErrno(errno, "recv");
  }
}

Status FrameReader::next(Frame* frame, bool* got) {
  *got = false;
  if (buffered() < kFrameHeaderBytes) return Status::Ok();
  const uint8_t* h = buf_.data() + start_;
  if (getLe32(h) != kFrameMagic)
    return Status::InvalidArgument("bad frame magic (not a Chorus peer, or a corrupted stream)");
  uint32_t len = getLe32(h + 8);
  if (len > maxPayload_)
    return Status::InvalidArgument("frame of " + std::to_string(len) + " bytes exceeds the " +
                                   std::to_string(maxPayload_) + "-byte limit");
  if (buffered() < kFrameHeaderBytes + len) return Status::Ok();
  frame->type = getLe32(h + 4);
  frame->payload.assign(h + kFrameHeaderBytes, h + kFrameHeaderBytes + len);
  start_ += kFrameHeaderBytes + len;
  if (start_ > (1u << 20) && start_ * 2 > buf_.size()) {  // reclaim consumed space now and then
    buf_.erase(buf_.begin(), buf_.begin() + start_);
    start_ = 0;
  }
  *got = true;
  return Status::Ok();
}

Status recvFrame(int fd, FrameReader* reader, Deadline deadline, Frame* frame) {
  for (;;) {
    bool got = false, closed = false;
    CHORUS_RETURN_IF_ERROR(reader->next(frame, &got));
    if (got) return Status::Ok();
    short rev = 0;
    CHORUS_RETURN_IF_ERROR(pollOne(fd, POLLIN, deadline, &rev));
    if (rev == 0) return Status::Timeout("timed out waiting for a message");
    CHORUS_RETURN_IF_ERROR(reader->readAvailable(fd, &closed));
    if (closed) {
      CHORUS_RETURN_IF_ERROR(reader->next(frame, &got));
      if (got) return Status::Ok();
      return Status::RemoteError("connection closed by peer");
    }
  }
}

}  // namespace chorus
