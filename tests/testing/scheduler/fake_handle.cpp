#include "fake_handle.h"

#include <stdexcept>
#include <string>

namespace koord::roles::scheduler::testkit {

Status FakeHandle::runFilterPlugins(const CycleState&, const PodInfo&, const NodeInfo&) const {
  return Status::success();
}

Status FakeHandle::runFilterPluginsWithNominatedPods(const CycleState&, const PodInfo&,
                                                     const NodeInfo&) const {
  return Status::success();
}

Status FakeHandle::runPreFilterAddPod(CycleState&, const PodInfo&, const PodInfo&,
                                      const NodeInfo&) const {
  return Status::success();
}

Status FakeHandle::runPreFilterRemovePod(CycleState&, const PodInfo&, const PodInfo&,
                                         const NodeInfo&) const {
  return Status::success();
}

const NodeInfo& FakeHandle::node(std::string_view name) const {
  const NodeInfo* info = snapshot_.get(name);
  if (info == nullptr)
    throw std::out_of_range("no node " + std::string(name) + " in the test's snapshot");
  return *info;
}

std::vector<const NodeInfo*> FakeHandle::nodes() const {
  std::vector<const NodeInfo*> out;
  for (const auto& n : snapshot_.nodes())
    out.push_back(n.get());
  return out;
}

}  // namespace koord::roles::scheduler::testkit
