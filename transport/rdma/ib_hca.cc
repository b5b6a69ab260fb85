#include "transport/rdma/ib_hca.h"

#include <cctype>

namespace chorus {

namespace {

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

Status parseEntry(const std::string& token, const std::string& text, const char* source,
                  IbHcaRule::Entry* out) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(std::string(source) + "='" + text + "': entry '" + token + "' " +
                                   why +
                                   "; expected [^][=]device[:port],... (e.g. mlx5_0:1,mlx5_1)");
  };
  size_t colon = token.find(':');
  out->name = trim(token.substr(0, colon));
  out->port = -1;
  if (out->name.empty()) return bad("has no device name");
  // `^` and `=` only count at the very start; NCCL would take them into the name, which then
  // matches nothing and leaves the job without a NIC for no visible reason.
  if (out->name.find_first_of("^=") != std::string::npos)
    return bad("has '^' or '=' inside (they go once, at the start of the list, '^' first)");
  if (colon == std::string::npos) return Status::Ok();
  std::string port = trim(token.substr(colon + 1));
  if (port.empty() || port.size() > 3 || port.find_first_not_of("0123456789") != std::string::npos)
    return bad("has port '" + port + "', which is not a port number");
  out->port = std::stoi(port);
  if (out->port < 1 || out->port > 255) return bad("has port " + port + " (ports are 1..255)");
  return Status::Ok();
}

}  // namespace

Status parseIbHca(const std::string& text, IbHcaRule* out, const char* source) {
  *out = IbHcaRule{};
  std::string rest = trim(text);
  if (!rest.empty() && rest[0] == '^') {
    out->exclude = true;
    rest = trim(rest.substr(1));
  }
  if (!rest.empty() && rest[0] == '=') {
    out->exact = true;
    rest = trim(rest.substr(1));
  }
  size_t start = 0;
  while (start <= rest.size()) {
    size_t comma = rest.find(',', start);
    if (comma == std::string::npos) comma = rest.size();
    std::string token = trim(rest.substr(start, comma - start));
    start = comma + 1;
    if (token.empty()) continue;  // "a,,b" and a trailing comma, as NCCL tolerates them
    IbHcaRule::Entry e;
    CHORUS_RETURN_IF_ERROR(parseEntry(token, text, source, &e));
    out->entries.push_back(std::move(e));
  }
  if ((out->exclude || out->exact) && out->entries.empty())
    return Status::InvalidArgument(std::string(source) + "='" + text +
                                   "' names no device after its '^'/'=' prefix");
  return Status::Ok();
}

bool IbHcaRule::nameMatches(const Entry& e, const std::string& device) const {
  return exact ? device == e.name : device.compare(0, e.name.size(), e.name) == 0;
}

bool IbHcaRule::allowsDevice(const std::string& device) const {
  if (entries.empty()) return true;
  for (const Entry& e : entries) {
    if (!nameMatches(e, device)) continue;
    // An exclusion of one port leaves the device's other ports usable.
    if (!exclude) return true;
    if (e.port < 0) return false;
  }
  return exclude;
}

bool IbHcaRule::allows(const std::string& device, int port) const {
  if (entries.empty()) return true;
  for (const Entry& e : entries)
    if (nameMatches(e, device) && (e.port < 0 || e.port == port)) return !exclude;
  return exclude;
}

}  // namespace chorus
