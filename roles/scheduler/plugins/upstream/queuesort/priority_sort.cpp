#include "plugins/upstream/queuesort/priority_sort.h"

#include "plugins/upstream/args_decode.h"

namespace koord::roles::scheduler::upstream {

namespace {

std::int32_t priorityOf(const QueuedPodInfo& q) {
  return q.pod ? q.pod->priority : 0;
}

}  // namespace

bool PrioritySort::less(const QueuedPodInfo& a, const QueuedPodInfo& b) const {
  const std::int32_t pa = priorityOf(a);
  const std::int32_t pb = priorityOf(b);
  return pa > pb || (pa == pb && a.timestamp < b.timestamp);
}

}  // namespace koord::roles::scheduler::upstream
