// The configured scheduler extenders over HTTP(S): POST <urlPrefix>/<verb> with kube-scheduler's
// extender v1 JSON bodies, through koord's HTTP client on a thread of their own.
#pragma once

#include <boost/json/fwd.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/extender_config.h"
#include "extender/extender.h"
#include "koord/kube/error.h"

namespace koord::roles::scheduler {

/// What an extender is sent as the pod. Extenders read the whole object (labels, annotations,
/// each container's resources), and the PodInfo projection keeps only what plugins read, so the
/// pod is fetched from the API server (`fetch_pod`, a blocking GET) once per cycle in which an
/// interested extender has a filter, prioritize or preempt verb, and kept while its
/// resourceVersion stays the same (a retried pod is not fetched again; preemption reuses the
/// filter's). A fetch that fails is that extender call's failure. A Reservation's stand-in, or
/// every pod without `fetch_pod`, is sent as rebuilt from the projection (extender_json.h).
/// Nodes, when the extender does not cache them, are always rebuilt from the Node projection:
/// fetching thousands per cycle would cost more than the scheduling. So are preemption's
/// victims, for the same reason: a preemption may name hundreds of them.
struct HttpExtendersOptions {
  std::function<kube::Expected<boost::json::value>(const PodInfo&)> fetch_pod;
};

class HttpExtenders final : public Extenders {
 public:
  /// One HTTP client per extender with its TLS settings (tlsConfig; with enableHTTPS and no CA,
  /// the certificate is not verified, as kube-scheduler); the URL's scheme decides http or https.
  /// Throws std::invalid_argument naming "extenders[i]" when a certificate or key cannot be
  /// loaded.
  HttpExtenders(const std::vector<config::Extender>& extenders, HttpExtendersOptions options);
  /// Waits for calls in flight (each ends by its httpTimeout); their callbacks still run.
  ~HttpExtenders() override;
  HttpExtenders(const HttpExtenders&) = delete;
  HttpExtenders& operator=(const HttpExtenders&) = delete;

  Status filter(const PodInfo& pod, std::vector<const NodeInfo*>& feasible,
                NodeStatusMap& failed) override;
  void prioritize(const PodInfo& pod, const std::vector<const NodeInfo*>& nodes,
                  std::vector<NodeScore>& scores) override;
  bool bindsPod(const PodInfo& pod) const override;
  void bind(const PodInfo& pod, const std::string& node, StatusCallback done) override;
  bool preemptsFor(const PodInfo& pod) const override;
  Status processPreemption(const PodInfo& pod, const Snapshot& snapshot,
                           std::vector<PreemptionCandidate>& candidates) override;

  /// Whether extender `i` handles `pod` (its managed resources; every pod without any).
  bool interested(std::size_t i, const PodInfo& pod) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace koord::roles::scheduler
