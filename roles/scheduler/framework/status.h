// A plugin's answer at one extension point, as kube-scheduler's framework.Status: a code, the
// reasons shown in FailedScheduling events, and the plugin that failed. Success allocates nothing.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace koord::roles::scheduler {

enum class Code {
  kSuccess,
  kError,
  /// Unschedulable here, but preemption may help.
  kUnschedulable,
  /// Unschedulable here and preemption cannot help (node affinity, taints, ...).
  kUnschedulableAndUnresolvable,
  kWait,
  kSkip,
};

class Status {
 public:
  Status() = default;
  Status(Code code, std::string reason) : code_(code) { reasons_.push_back(std::move(reason)); }
  Status(Code code, std::vector<std::string> reasons) : code_(code), reasons_(std::move(reasons)) {}

  static Status success() { return {}; }
  static Status error(std::string reason) { return {Code::kError, std::move(reason)}; }
  static Status unschedulable(std::string reason) {
    return {Code::kUnschedulable, std::move(reason)};
  }
  static Status unresolvable(std::string reason) {
    return {Code::kUnschedulableAndUnresolvable, std::move(reason)};
  }

  Code code() const { return code_; }
  bool ok() const { return code_ == Code::kSuccess; }
  bool isUnschedulable() const {
    return code_ == Code::kUnschedulable || code_ == Code::kUnschedulableAndUnresolvable;
  }
  const std::vector<std::string>& reasons() const { return reasons_; }
  /// Reasons joined with ", ".
  std::string message() const;
  const std::string& plugin() const { return plugin_; }
  Status& withPlugin(std::string plugin) {
    plugin_ = std::move(plugin);
    return *this;
  }

 private:
  Code code_ = Code::kSuccess;
  std::vector<std::string> reasons_;
  std::string plugin_;
};

}  // namespace koord::roles::scheduler
