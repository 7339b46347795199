// What a plugin declares at registration about the objects it reads beyond pods and nodes: the
// scheduler's informer set builds, starts and syncs one informer per declared kind before
// scheduling, and hands its source to plugins through ClusterView::source<T>(key).
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace boost::asio {
class io_context;
}
namespace koord::kube {
class RestClient;
}

namespace koord::roles::scheduler {

class AnyObjectSource;
struct NodeInfo;

/// Where a declared informer sends what the scheduler does beyond storing: kinds kept on each
/// node's NodeInfo (one object per node, named as the node) go to the cache through here.
class NodeObjectSink {
 public:
  virtual ~NodeObjectSink() = default;
  /// `attach` writes the object into a NodeInfo; `added`: the node had none of this kind (a
  /// first report may make pods schedulable there).
  virtual void onNodeObject(const std::string& kind_key, const std::string& node,
                            std::function<void(NodeInfo&)> attach, bool added) = 0;
  /// `detach` clears it from a NodeInfo.
  virtual void onNodeObjectDelete(const std::string& kind_key, const std::string& node,
                                  std::function<void(NodeInfo&)> detach) = 0;
};

/// One declared kind's informer as the scheduler's informer set runs it (informerFor<T> in
/// declared_informer.h builds it).
class ObjectInformer {
 public:
  virtual ~ObjectInformer() = default;
  virtual const AnyObjectSource& source() const = 0;
  /// Routes node-attached kinds to `sink`; before start().
  virtual void connect(NodeObjectSink& sink) = 0;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual bool waitForSync(std::chrono::milliseconds timeout) const = 0;
};

struct ObjectDeclaration {
  /// The name plugins look the source up by, conventionally group/version/resource. Plugins
  /// declaring the same key share one informer (that of the first by plugin name).
  std::string key;
  /// The API group and plural resource listed ("slo.koordinator.sh", "nodemetrics"): what a
  /// recording of the cluster files the kind's objects under.
  std::string group;
  std::string resource;
  std::function<std::unique_ptr<ObjectInformer>(kube::RestClient&, boost::asio::io_context&)>
      make_informer;
  /// The same kind over a fixed list of the API's objects, as a recording holds them (the
  /// operator commands schedule on a snapshot): a source that never changes, whose start()
  /// hands every object to the subscribers and the node sink once. An object the projection
  /// refuses is left out and named in `errors`.
  std::function<std::unique_ptr<ObjectInformer>(const std::vector<boost::json::value>& items,
                                                std::vector<std::string>& errors)>
      make_fixed;
};

}  // namespace koord::roles::scheduler
