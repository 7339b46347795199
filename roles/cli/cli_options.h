// The flags every operator command takes, named as kubectl names them (--kubeconfig, --context,
// -n, -A, -o), plus --snapshot to read a recording instead of the cluster.
#pragma once

#include <string>
#include <vector>

#include "koord/core/flags.h"
#include "output/output_format.h"
#include "snapshot/cluster_snapshot.h"

namespace koord::roles::cli {

struct CliOptions {
  std::string kubeconfig;
  std::string context;
  std::string namespace_;
  bool all_namespaces = false;
  std::string output;
  /// A file `koord snapshot` wrote; the cluster is not contacted then.
  std::string snapshot_file;
  std::string koord_namespace = "koordinator-system";
  // -n, -o and -A: FlagSet has no shorthands, so they are flags of their own, merged into the
  // long ones by resolveShorthands (the long one wins when both are given).
  std::string short_n;
  std::string short_o;
  bool short_a = false;

  OutputFormat format() const { return parseOutputFormat(output); }
};

void registerCliFlags(FlagSet& flags, CliOptions& o);
/// After parsing: -n, -o, -A into --namespace, --output, --all-namespaces.
void resolveShorthands(CliOptions& o);

/// The words before the first flag ("nodes" in `top nodes -o json`), taken out of `args`.
std::vector<std::string> takeLeadingWords(std::vector<std::string>& args);

/// The snapshot the command works on: --snapshot's file, else one taken from the cluster now
/// (with a progress line on stderr when it is a terminal). Throws std::runtime_error naming the
/// file or the kind that could not be read.
/// `kinds` (SnapshotKind::kind) limits what is listed from the cluster; empty lists every kind.
ClusterSnapshot loadSnapshot(const CliOptions& o, std::vector<std::string_view> kinds = {});

/// The namespace a command limits itself to: "" with -A, else -n, else the context's.
std::string effectiveNamespace(const CliOptions& o);

}  // namespace koord::roles::cli
