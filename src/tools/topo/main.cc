// chorus-topo: what Chorus sees on this machine (or in a topology file), as a tree, JSON, a
// topology file, or a Graphviz picture, and which transport and algorithm it would use.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "chorus/config.h"
#include "tools/cli/tool.h"
#include "tools/topo/render.h"

extern char** environ;

namespace {

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
  chorus::cli::Tool tool(
      "chorus-topo",
      "[--file PATH] [--json | --dot | --svg OUT | --png OUT | --dump OUT] [--explain]",
      "Prints what Chorus sees on this machine, or in a topology file, as a "
      "tree, JSON, a topology file or a Graphviz picture, and which transport and "
      "algorithm class it would use between ranks.");
  CLI::App& app = tool.app();
  std::string file, mode = "tree", out;
  bool explain = false;
  int ranksPerHost = 0;
  RenderOptions ro;
  chorus::Config config;  // CHORUS_TOPO_FILE: show the file a communicator would load
  chorus::Status cst = chorus::Config::fromEnvironment(&config);
  if (!cst.ok()) return fprintf(stderr, "chorus-topo: %s\n", cst.toString().c_str()), 2;
  file = config.topoFile;
  chorus::cli::text(app, "--file", &file, "PATH",
                    "a topology file or an hwloc XML file (default: $CHORUS_TOPO_FILE, else "
                    "discover this machine)");
  // The outputs exclude each other; as before, the last one given counts.
  app.add_flag_callback(
      "--json", [&] { mode = "json"; }, "the topology as JSON (docs/json.md)");
  app.add_flag_callback(
      "--dot", [&] { mode = "dot"; }, "Graphviz source");
  for (const char* m : {"svg", "png", "dump"})
    chorus::cli::checked(
        app, std::string("--") + m,
        [&mode, &out, m](const std::string&, const std::string& v) { mode = m, out = v; }, "OUT",
        "",
        std::string(m) == "dump" ? "write a topology file (docs/topology.md)"
                                 : std::string("run Graphviz 'dot' to draw it into OUT as ") + m);
  app.add_flag("--explain", explain, "transport and algorithm class between ranks, and why");
  chorus::cli::integer(app, "--max-hosts", &ro.maxHosts, 0, INT32_MAX,
                       "hosts printed or drawn in full");
  chorus::cli::integer(app, "--ranks-per-host", &ranksPerHost, 1, INT32_MAX,
                       "place N host-memory ranks on every host instead of one per GPU")
      ->default_str("");
  if (int rc = tool.parse(argc, argv); rc >= 0) return rc;
  Topology t;
  chorus::Status st =
      file.empty() ? discoverLocalTopology(&t, &ro.notes) : loadTopologyFile(file, &t);
  if (!st.ok()) return fprintf(stderr, "chorus-topo: %s\n", st.toString().c_str()), 1;
  if (ranksPerHost > 0) placeRanksPerHost(&t, ranksPerHost);
  if (tool.quiet()) ro.notes.clear();

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
