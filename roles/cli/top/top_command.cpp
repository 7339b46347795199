// `koord top nodes|pods`: one table (or -o json|yaml) from the cluster or a snapshot file;
// --watch takes a fresh snapshot every --interval until interrupted.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "cli_commands.h"
#include "cli_options.h"
#include "top/node_top.h"
#include "top/pod_top.h"

namespace koord::roles::cli {
namespace {

enum class Subject { kNodes, kPods };

Subject subjectOf(const std::vector<std::string>& words) {
  if (words.size() == 1) {
    const std::string& w = words[0];
    // kubectl's names for the kinds: plural, singular and short.
    if (w == "nodes" || w == "node" || w == "no")
      return Subject::kNodes;
    if (w == "pods" || w == "pod" || w == "po")
      return Subject::kPods;
  }
  throw FlagError(words.empty() ? std::string("say what to show: nodes or pods")
                                : fmt::format("{:?}: want nodes or pods", fmt::join(words, " ")));
}

}  // namespace

int runTop(const std::string& program, std::vector<std::string> args) {
  CliOptions o;
  bool watch = false;
  std::chrono::milliseconds interval{15000};
  std::string node;
  FlagSet flags(program);
  registerCliFlags(flags, o);
  flags.addBool("watch", &watch, false, "Print again every --interval until interrupted.");
  flags.addDuration("interval", &interval, std::chrono::milliseconds(15000),
                    "How often --watch takes a new snapshot.");
  flags.addString("node", &node, "", "top pods: only the pods bound to this node.");
  flags.addHelpSection("Subjects", {"nodes   per node: allocatable, LS and BE usage (NodeMetric), "
                                    "batch and mid allocatable, the BE CPU suppression leaves, "
                                    "evictions, reservations, the metric's age",
                                    "pods    per pod: QoS and priority class, requests against "
                                    "usage"});
  std::vector<std::string> words = takeLeadingWords(args);
  if (flags.parse(args) == FlagSet::Outcome::kHelp) {
    std::fputs(flags.usage().c_str(), stdout);
    return 0;
  }
  resolveShorthands(o);
  const Subject subject = subjectOf(words);
  const OutputFormat format = o.format();
  if (watch && !o.snapshot_file.empty())
    throw FlagError("--watch takes new snapshots from the cluster; it cannot with --snapshot");
  if (interval < std::chrono::seconds(1))
    throw FlagError(fmt::format("--interval {}ms: at least 1s", interval.count()));
  const std::string ns = subject == Subject::kPods ? effectiveNamespace(o) : std::string();

  const bool terminal = ::isatty(STDOUT_FILENO) == 1;
  while (true) {
    // What each table reads, and no more: a big cluster's Devices or quotas are not listed.
    ClusterSnapshot snapshot =
        subject == Subject::kNodes
            ? loadSnapshot(o, {"Node", "Pod", "NodeMetric", "NodeSLO", "Reservation", "Event"})
            : loadSnapshot(o, {"Pod", "NodeMetric"});
    std::string out;
    if (subject == Subject::kNodes) {
      auto rows = topNodes(snapshot);
      out = format == OutputFormat::kTable ? nodeTopTable(rows)
                                           : formatStructured(nodeTopJson(snapshot, rows), format);
    } else {
      auto rows = topPods(snapshot, PodTopOptions{ns, node});
      out = format == OutputFormat::kTable ? podTopTable(rows, !ns.empty())
                                           : formatStructured(podTopJson(snapshot, rows), format);
    }
    if (watch && terminal)
      std::fputs("\033[H\033[2J", stdout);
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
    if (!watch)
      return 0;
    if (!terminal)
      std::fputs("\n", stdout);
    std::this_thread::sleep_for(interval);
  }
}

}  // namespace koord::roles::cli
