#include "cli_options.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>

#include "snapshot/api_connection.h"
#include "snapshot/snapshot_fetch.h"

namespace koord::roles::cli {

void registerCliFlags(FlagSet& flags, CliOptions& o) {
  flags.addString("kubeconfig", &o.kubeconfig, "",
                  "Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).");
  flags.addString("context", &o.context, "", "The kubeconfig context to use.");
  flags.addString("namespace", &o.namespace_, "", "Namespace (default: the context's).");
  flags.addString("n", &o.short_n, "", "Shorthand for --namespace.");
  flags.addBool("all-namespaces", &o.all_namespaces, false, "Every namespace.");
  flags.addBool("A", &o.short_a, false, "Shorthand for --all-namespaces.");
  flags.addString("output", &o.output, "", "Output format: table (default), json or yaml.");
  flags.addString("o", &o.short_o, "", "Shorthand for --output.");
  flags.addString("snapshot", &o.snapshot_file, "",
                  "Read this file (written by koord snapshot) instead of the cluster.");
  flags.addString("koord-namespace", &o.koord_namespace, "koordinator-system",
                  "Where koord-scheduler's and koord-manager's ConfigMaps are.");
}

std::vector<std::string> takeLeadingWords(std::vector<std::string>& args) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < args.size() && !args[i].empty() && args[i][0] != '-')
    words.push_back(args[i++]);
  args.erase(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(i));
  return words;
}

void resolveShorthands(CliOptions& o) {
  if (o.namespace_.empty())
    o.namespace_ = o.short_n;
  if (o.output.empty())
    o.output = o.short_o;
  o.all_namespaces = o.all_namespaces || o.short_a;
}

ClusterSnapshot loadSnapshot(const CliOptions& o, std::vector<std::string_view> kinds) {
  if (!o.snapshot_file.empty()) {
    auto snapshot = readSnapshotFile(o.snapshot_file);
    if (!snapshot)
      throw std::runtime_error(snapshot.error().message);
    return std::move(*snapshot);
  }
  ApiConnection api(o.kubeconfig, o.context);
  FetchOptions fetch;
  fetch.koord_namespace = o.koord_namespace;
  fetch.kinds = std::move(kinds);
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  if (terminal) {
    fetch.on_kind = [](const SnapshotKind& kind) {
      std::fprintf(stderr, "\r\033[Klisting %.*s...", static_cast<int>(kind.resource.size()),
                   kind.resource.data());
    };
  }
  fetch.warn = [terminal](std::string_view line) {
    std::fprintf(stderr, "%swarning: %.*s\n", terminal ? "\r\033[K" : "",
                 static_cast<int>(line.size()), line.data());
  };
  auto snapshot = takeSnapshot(api.client(), fetch);
  if (terminal)
    std::fputs("\r\033[K", stderr);
  if (!snapshot)
    throw std::runtime_error(snapshot.error().message);
  return std::move(*snapshot);
}

std::string effectiveNamespace(const CliOptions& o) {
  if (o.all_namespaces)
    return "";
  if (!o.namespace_.empty())
    return o.namespace_;
  if (!o.snapshot_file.empty())
    return "default";
  ApiConnection api(o.kubeconfig, o.context);
  return api.defaultNamespace();
}

}  // namespace koord::roles::cli
