// Test fixture: N simulated hosts (network namespaces on a bridge, each with its own /dev/shm),
// made by netns.sh next to this file and removed by the destructor, so even a failing test
// cleans up; a test process that is killed is swept by the next fixture. Ranks join a host in
// the harness's setup hook (enterHost), before the bootstrap picks its address.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace chorus::test {

class NetnsHosts {
 public:
  // With `rails` > 1 each host has that many links, each to a network of its own (netns.sh).
  explicit NetnsHosts(int hosts, int rails = 1) : hosts_(hosts) {
    static std::atomic<int> counter{0};
    tag_ = "chorus-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    if (geteuid() != 0) {
      why_ = "needs root to create network namespaces (CI runs the suite as root)";
      return;
    }
    sh("sweep");
    std::string out;
    if (!sh("up " + tag_ + " " + std::to_string(hosts) + " " + std::to_string(rails), &out)) {
      why_ =
          "could not create network namespaces (no CAP_SYS_ADMIN/CAP_NET_ADMIN, or no "
          "iproute2?): " +
          out;
      sh("down " + tag_);
      return;
    }
    ok_ = true;
  }
  ~NetnsHosts() {
    if (ok_) sh("down " + tag_);
  }
  NetnsHosts(const NetnsHosts&) = delete;
  NetnsHosts& operator=(const NetnsHosts&) = delete;

  bool ok() const { return ok_; }
  const std::string& whyNot() const { return why_; }
  const std::string& tag() const { return tag_; }
  int hosts() const { return hosts_; }
  static std::string address(int host, int rail = 0) {
    return "10.77." + std::to_string(rail) + "." + std::to_string(host + 1);
  }

  // Runs netns.sh with `args`; true on exit status 0. Output goes to *out if given.
  bool sh(const std::string& args, std::string* out = nullptr) const {
    std::string cmd = script() + " " + args + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return false;
    char buf[512];
    std::string text;
    while (fgets(buf, sizeof buf, p)) text += buf;
    int rc = pclose(p);
    if (out) *out = text;
    return rc == 0;
  }
  bool setLink(int host, bool up) const {
    return sh("link " + tag_ + " " + std::to_string(host) + (up ? " up" : " down"));
  }
  bool shape(int host, const std::string& rate) const {
    return sh("shape " + tag_ + " " + std::to_string(host) + " " + rate);
  }

  // In a freshly forked child: joins host `host` (its network namespace, a private mount
  // namespace with the host's tmpfs on /dev/shm, CHORUS_HOSTID). 0, or a code for _exit.
  int enterHost(int host) const {
    const std::string ns = tag_ + "-h" + std::to_string(host);
    int fd = open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 80;
    int rc = setns(fd, CLONE_NEWNET);
    close(fd);
    if (rc != 0) return 81;
    if (unshare(CLONE_NEWNS) != 0) return 82;
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 83;
    const std::string dir = "/run/chorus-netns/" + tag_ + "/h" + std::to_string(host);
    if (mount(dir.c_str(), "/dev/shm", nullptr, MS_BIND, nullptr) != 0) return 84;
    setenv("CHORUS_HOSTID", ns.c_str(), 1);
    return 0;
  }

  static std::string script() {
    std::string here = __FILE__;
    return here.substr(0, here.rfind('/')) + "/netns.sh";
  }

 private:
  int hosts_;
  bool ok_ = false;
  std::string tag_, why_;
};

}  // namespace chorus::test
