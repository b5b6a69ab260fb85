// chorus-topo: what Chorus sees on this machine (or in a topology file), as a tree, JSON, a
// topology file, or a Graphviz picture, and which transport and algorithm it would use.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "chorus/config.h"
#include "tools/topo/render.h"

extern char** environ;

namespace {

const char kUsage[] =
    "usage: chorus-topo [--file PATH] [--json | --dot | --svg OUT | --png OUT | --dump OUT]\n"
    "                   [--explain] [--max-hosts N] [--ranks-per-host N]\n"
    "  --file PATH   load a topology file or an hwloc XML file (default: $CHORUS_TOPO_FILE, else\n"
    "                discover this machine)\n"
    "  --json        the topology as JSON\n"
    "  --dot         Graphviz source; --svg/--png OUT run 'dot' to draw it into OUT\n"
    "  --dump OUT    write a topology file (docs/topology.md)\n"
    "  --explain     transport and algorithm class between ranks, and why\n"
    "  --max-hosts N hosts printed or drawn in full (default 2)\n"
    "  --ranks-per-host N  place N host-memory ranks on every host instead of one per GPU\n";

// Pipes `text` into `dot -T<format> -o <out>` (no shell, so any file name is safe).
int runDot(const std::string& text, const std::string& format, const std::string& out) {
  int fds[2];
  if (pipe(fds) != 0) return perror("pipe"), 1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  std::string t = "-T" + format;
  const char* argv[] = {"dot", t.c_str(), "-o", out.c_str(), nullptr};
  pid_t pid;
  int err = posix_spawnp(&pid, "dot", &fa, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[0]);
  if (err != 0) {
    close(fds[1]);
    fprintf(stderr, "chorus-topo: cannot run Graphviz 'dot': %s (install graphviz, or use --dot)\n",
            strerror(err));
    return 1;
  }
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = write(fds[1], text.data() + off, text.size() - off);
    if (n <= 0) break;
    off += size_t(n);
  }
  close(fds[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "chorus-topo: dot failed drawing %s\n", out.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace chorus::topo;
  std::string file, mode = "tree", out;
  bool explain = false;
  int ranksPerHost = 0;
  RenderOptions ro;
  chorus::Config config;  // CHORUS_TOPO_FILE: show the file a communicator would load
  chorus::Status cst = chorus::Config::fromEnvironment(&config);
  if (!cst.ok()) return fprintf(stderr, "chorus-topo: %s\n", cst.toString().c_str()), 2;
  file = config.topoFile;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool hasValue = i + 1 < argc;
    if (a == "--file" && hasValue)
      file = argv[++i];
    else if (a == "--json" || a == "--dot")
      mode = a.substr(2);
    else if ((a == "--svg" || a == "--png" || a == "--dump") && hasValue)
      mode = a.substr(2), out = argv[++i];
    else if (a == "--explain")
      explain = true;
    else if (a == "--max-hosts" && hasValue)
      ro.maxHosts = atoi(argv[++i]);
    else if (a == "--ranks-per-host" && hasValue)
      ranksPerHost = atoi(argv[++i]);
    else if (a == "-h" || a == "--help")
      return fputs(kUsage, stdout), 0;
    else
      return fprintf(stderr, "chorus-topo: unknown or incomplete option '%s'\n%s", a.c_str(),
                     kUsage),
             2;
  }
  Topology t;
  chorus::Status st =
      file.empty() ? discoverLocalTopology(&t, &ro.notes) : loadTopologyFile(file, &t);
  if (!st.ok()) return fprintf(stderr, "chorus-topo: %s\n", st.toString().c_str()), 1;
  if (ranksPerHost > 0) placeRanksPerHost(&t, ranksPerHost);

  int rc = 0;
  if (mode == "tree")
    fputs(renderTree(t, ro).c_str(), stdout);
  else if (mode == "json")
    fputs(renderJson(t).c_str(), stdout);
  else if (mode == "dot")
    fputs(renderDot(t, ro).c_str(), stdout);
  else if (mode == "svg" || mode == "png")
    rc = runDot(renderDot(t, ro), mode, out);
  else if (mode == "dump") {
    st = saveTopologyFile(t, out);
    if (!st.ok()) return fprintf(stderr, "chorus-topo: %s\n", st.toString().c_str()), 1;
  }
  if (explain) fputs(explainTopology(t).c_str(), stdout);
  return rc;
}
