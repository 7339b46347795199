#include <boost/json.hpp>

#include <utility>

#include "framework_handle.h"
#include "koord/kube/rest_client.h"

namespace koord::roles::scheduler {

// Without an API client (table tests, the in-process benchmark) the API calls fail plainly:
// a plugin that needs them reports the error instead of acting as if they had happened.
void ClusterView::bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
                          ApiCallback done) const {
  done(kube::makeKubeError("binding " + pod->key() + " to " + node +
                           ": this scheduler has no API client"));
}

kube::Expected<void> ClusterView::deletePod(const PodInfo& pod) const {
  return kube::makeKubeError("deleting " + pod.key() + ": this scheduler has no API client");
}

kube::Expected<void> ClusterView::evictPod(const PodInfo& pod) const {
  return kube::makeKubeError("evicting " + pod.key() + ": this scheduler has no API client");
}

kube::Expected<void> ClusterView::clearNominatedNodeName(const PodInfo& pod) const {
  return kube::makeKubeError("clearing the nomination of " + pod.key() +
                             ": this scheduler has no API client");
}

void ClusterView::patchPod(std::shared_ptr<const PodInfo> pod, boost::json::value /*patch*/,
                           ApiCallback done) const {
  done(kube::makeKubeError("patching " + pod->key() + ": this scheduler has no API client"));
}

void ClusterView::mergePatch(const kube::ResourceRef& ref, boost::json::value /*patch*/,
                             ApiCallback done) const {
  done(kube::makeKubeError("patching " + ref.resource + " " + ref.namespace_ + "/" + ref.name +
                           ": this scheduler has no API client"));
}

}  // namespace koord::roles::scheduler
