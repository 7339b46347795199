// A plugin's answer at one extension point, as kube-scheduler's framework.Status: a code, the
// reasons shown in FailedScheduling events, and the plugin that failed. Success allocates nothing.
#pragma once

#include <memory>
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
  /// PreFilter/PreScore: nothing to do for this pod (see skip()); Bind: not this plugin's pod.
  kSkip,
};

class Status {
 public:
  Status() = default;
  explicit Status(Code code) : code_(code) {}
  Status(Code code, std::string reason) : code_(code), detail_(std::make_unique<Detail>()) {
    detail_->reasons.push_back(std::move(reason));
  }
  Status(Code code, std::vector<std::string> reasons)
      : code_(code), detail_(std::make_unique<Detail>(Detail{std::move(reasons), {}})) {}
  Status(const Status& other)
      : code_(other.code_),
        detail_(other.detail_ ? std::make_unique<Detail>(*other.detail_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) {
      code_ = other.code_;
      detail_ = other.detail_ ? std::make_unique<Detail>(*other.detail_) : nullptr;
    }
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  static Status success() { return {}; }
  /// PreFilter/PreScore: nothing for this plugin to do for the pod; the framework then leaves
  /// its Filter (and AddPod/RemovePod) or Score out for the rest of the cycle.
  static Status skip() { return Status(Code::kSkip); }
  static Status error(std::string reason) { return {Code::kError, std::move(reason)}; }
  static Status unschedulable(std::string reason) {
    return {Code::kUnschedulable, std::move(reason)};
  }
  static Status unresolvable(std::string reason) {
    return {Code::kUnschedulableAndUnresolvable, std::move(reason)};
  }

  Code code() const { return code_; }
  bool ok() const { return code_ == Code::kSuccess; }
  bool isSkip() const { return code_ == Code::kSkip; }
  bool isUnschedulable() const {
    return code_ == Code::kUnschedulable || code_ == Code::kUnschedulableAndUnresolvable;
  }
  const std::vector<std::string>& reasons() const {
    return detail_ ? detail_->reasons : kNoReasons;
  }
  /// Reasons joined with ", ".
  std::string message() const;
  const std::string& plugin() const { return detail_ ? detail_->plugin : kNoPlugin; }
  Status& withPlugin(std::string plugin) {
    if (!detail_)
      detail_ = std::make_unique<Detail>();
    detail_->plugin = std::move(plugin);
    return *this;
  }

 private:
  // Filter and Score return a Status per plugin per node, almost always Success: keeping the
  // words behind one pointer makes that a code and a null pointer to build and drop.
  struct Detail {
    std::vector<std::string> reasons;
    std::string plugin;
  };
  static const std::vector<std::string> kNoReasons;
  static const std::string kNoPlugin;

  Code code_ = Code::kSuccess;
  std::unique_ptr<Detail> detail_;
};

}  // namespace koord::roles::scheduler
