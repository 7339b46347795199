// What a plugin that works beyond one pass reaches in a running descheduler (Koordinator's
// Handle.ClientSet / EventRecorder / informers): the API clients, the pods the informers hold,
// and a place to register a controller that runs while this replica leads.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "framework/types.h"

namespace boost::asio {
class io_context;
}
namespace koord::kube {
class RestClient;
class EventRecorder;
}  // namespace koord::kube

namespace koord::roles::descheduler {

class PodEvictionApi;

/// A controller a plugin runs beside the passes: started once the caches have synced and this
/// replica leads, stopped at shutdown (stop must return promptly).
struct BackgroundController {
  std::string name;
  std::function<void()> start;
  std::function<void()> stop;
  /// True once what it watches has listed: the first pass waits for it, so that no plugin acts
  /// on a controller that cannot see its own objects yet.
  std::function<bool()> synced;
};

struct ClusterServices {
  /// The leader's fenced client (writes) and the plain one (reads, informers).
  kube::RestClient& writer;
  kube::RestClient& reader;
  kube::EventRecorder& events;
  boost::asio::io_context& io;
  /// The API side of an eviction (dry-run aware).
  PodEvictionApi& evictor;
  /// The configuration's dryRun: no mutating call at all.
  bool dry_run = false;
  /// A pod as the informer holds it; nullptr when unknown.
  std::function<std::shared_ptr<const Pod>(std::string_view ns, std::string_view name)> pod;
  std::function<void(BackgroundController)> add_controller;
};

}  // namespace koord::roles::descheduler
