// koord-scheduler in process over a ClusterSnapshot: the configuration the cluster runs (its
// koord-scheduler-config ConfigMap, or a file), every plugin's declared kinds from the
// recording, the nodes, pods and reservations fed as the informers would. Nothing is written.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "koord/kube/error.h"
#include "scheduler.h"
#include "snapshot/cluster_snapshot.h"

namespace koord::roles::cli {

struct SnapshotSchedulerOptions {
  /// A KubeSchedulerConfiguration file; empty: the snapshot's koord-scheduler-config ConfigMap.
  std::string config_file;
  std::string koord_namespace = "koordinator-system";
  /// A pod ("namespace/name") taken as not bound yet, whatever its nodeName: the pod being
  /// explained does not count against the node it already runs on.
  std::string as_pending;
};

class SnapshotScheduler {
 public:
  /// Throws std::runtime_error naming the ConfigMap or file when the configuration is missing
  /// or does not decode.
  SnapshotScheduler(const ClusterSnapshot& snapshot, const SnapshotSchedulerOptions& options);
  ~SnapshotScheduler();
  SnapshotScheduler(const SnapshotScheduler&) = delete;
  SnapshotScheduler& operator=(const SnapshotScheduler&) = delete;

  scheduler::Scheduler& scheduler();
  /// Where the configuration came from ("ConfigMap koordinator-system/koord-scheduler-config").
  const std::string& configSource() const;
  /// Objects of the snapshot the scheduler could not read (they were left out), one line each.
  const std::vector<std::string>& problems() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace koord::roles::cli
