#include "runtimehooks/cpuset/cpuset_rule_store.h"

#include <utility>

#include "koord/core/log.h"

namespace koord::roles::koordlet {

void CPUSetRuleStore::setSource(Source source, bool be_cpu_manager) {
  std::lock_guard lock(mu_);
  source_ = std::move(source);
  be_cpu_manager_ = be_cpu_manager;
  seen_.reset();
}

void CPUSetRuleStore::reset() {
  std::lock_guard lock(mu_);
  source_ = nullptr;
  be_cpu_manager_ = false;
  seen_.reset();
  rule_.reset();
  last_error_.clear();
  ++generation_;
}

bool CPUSetRuleStore::refresh() {
  // The source is called under the lock: reset() then waits for a call in flight, and the
  // source (the reporter's reported()) takes only its own lock.
  std::lock_guard lock(mu_);
  if (!source_)
    return false;
  std::shared_ptr<const kube::Labels> annotations = source_();
  if (annotations == nullptr || annotations == seen_)
    return false;
  seen_ = annotations;
  auto changed = updateLocked(*annotations);
  return changed && *changed;
}

kube::Expected<bool> CPUSetRuleStore::update(const kube::Labels& nrt_annotations) {
  std::lock_guard lock(mu_);
  return updateLocked(nrt_annotations);
}

kube::Expected<bool> CPUSetRuleStore::updateLocked(const kube::Labels& nrt_annotations) {
  auto rule = parseCPUSetRule(nrt_annotations);
  if (!rule) {
    if (rule.error().message != last_error_) {
      KOORD_LOG_ERROR("runtime hook CPUSetAllocator: NodeResourceTopology: {}; keeping the rule {}",
                      rule.error().message, rule_ ? "read before" : "unset");
      last_error_ = rule.error().message;
    }
    return rule.error();
  }
  if (!last_error_.empty())
    KOORD_LOG_INFO("runtime hook CPUSetAllocator: NodeResourceTopology read again");
  last_error_.clear();
  if (rule_ != nullptr && *rule_ == *rule)
    return false;
  KOORD_VLOG(2,
             "runtime hook CPUSetAllocator: rule: shared pools {:?}, system QoS {:?}, kubelet "
             "policy {:?}",
             allPoolsCpuset(*rule), rule->system_qos_cpuset, rule->kubelet_policy);
  rule_ = std::make_shared<const CPUSetRule>(std::move(*rule));
  ++generation_;
  return true;
}

std::shared_ptr<const CPUSetRule> CPUSetRuleStore::rule() {
  refresh();
  std::lock_guard lock(mu_);
  return rule_;
}

bool CPUSetRuleStore::beCPUManager() const {
  std::lock_guard lock(mu_);
  return be_cpu_manager_;
}

std::uint64_t CPUSetRuleStore::generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

CPUSetRuleStore& cpusetRuleStore() {
  static CPUSetRuleStore store;
  return store;
}

CPUSetRuleSourceScope::CPUSetRuleSourceScope(CPUSetRuleStore& store, CPUSetRuleStore::Source source,
                                             bool be_cpu_manager)
    : store_(store) {
  store_.setSource(std::move(source), be_cpu_manager);
}

CPUSetRuleSourceScope::~CPUSetRuleSourceScope() {
  store_.reset();
}

}  // namespace koord::roles::koordlet
