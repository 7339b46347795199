// `koord explain pod NS/NAME`: the cluster's koord-scheduler configuration run for one pod on a
// snapshot, every node's verdict and the scores; nothing is written to the cluster.
#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>

#include "cli_commands.h"
#include "cli_options.h"
#include "explain/pod_explanation_text.h"
#include "explain/snapshot_scheduler.h"
#include "framework/pod_info.h"

namespace koord::roles::cli {

int runExplain(const std::string& program, std::vector<std::string> args) {
  CliOptions o;
  SnapshotSchedulerOptions scheduling;
  FlagSet flags(program);
  registerCliFlags(flags, o);
  flags.addString("scheduler-config", &scheduling.config_file, "",
                  "A KubeSchedulerConfiguration file to use instead of the cluster's "
                  "koord-scheduler-config ConfigMap.");
  std::vector<std::string> words = takeLeadingWords(args);
  if (flags.parse(args) == FlagSet::Outcome::kHelp) {
    std::fputs(flags.usage().c_str(), stdout);
    return 0;
  }
  resolveShorthands(o);
  if (words.size() != 2 || (words[0] != "pod" && words[0] != "pods" && words[0] != "po"))
    throw FlagError("usage: explain pod NAMESPACE/NAME (or -n NAMESPACE NAME)");
  const OutputFormat format = o.format();
  std::string key = words[1];
  if (key.find('/') == std::string::npos)
    key = effectiveNamespace(o) + "/" + key;
  scheduling.koord_namespace = o.koord_namespace;

  const ClusterSnapshot snapshot = loadSnapshot(o);
  const boost::json::value* object = nullptr;
  for (const auto& p : snapshot.of("Pod")) {
    const auto& meta = p.at("metadata");
    if (fmt::format("{}/{}", std::string_view(meta.at("namespace").as_string()),
                    std::string_view(meta.at("name").as_string())) == key)
      object = &p;
  }
  if (object == nullptr)
    throw std::runtime_error(fmt::format("pod {} is not in the snapshot", key));
  auto pod = scheduler::decodePodInfo(*object);
  if (!pod)
    throw std::runtime_error(fmt::format("pod {}: {}", key, pod.error().message));

  // A bound pod is explained as if it were pending: how the nodes see it now, without itself.
  const std::string bound_to = pod->node_name;
  pod->node_name.clear();
  scheduling.as_pending = key;
  SnapshotScheduler sim(snapshot, scheduling);
  for (const auto& problem : sim.problems())
    std::fprintf(stderr, "warning: left out: %s\n", problem.c_str());
  auto explanation = sim.scheduler().explain(*pod);
  if (!explanation)
    throw std::runtime_error(fmt::format("pod {}: {}", key, explanation.error().message));
  if (format != OutputFormat::kTable) {
    std::fputs(formatStructured(explanationJson(key, *explanation), format).c_str(), stdout);
    return 0;
  }
  std::fputs(
      fmt::format("pod {}{}, scheduler {} ({})\n", key,
                  bound_to.empty() ? "" : fmt::format(" (bound to {}; seen as pending)", bound_to),
                  pod->scheduler_name, sim.configSource())
          .c_str(),
      stdout);
  std::fputs(explanationTable(*explanation).c_str(), stdout);
  return 0;
}

}  // namespace koord::roles::cli
