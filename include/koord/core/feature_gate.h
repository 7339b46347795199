// Feature gates with Kubernetes' semantics (--feature-gates=A=true,B=false, AllAlpha/AllBeta,
// lock-to-default), one gate set per role with Koordinator's gate names and defaults.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace koord {

enum class FeatureStage { kAlpha, kBeta, kGA, kDeprecated };

struct FeatureSpec {
  std::string name;
  bool default_value = false;
  FeatureStage stage = FeatureStage::kAlpha;
  bool lock_to_default = false;
};

/// A bad --feature-gates value: an unknown gate, a value that is not true/false, or a change to
/// a locked gate. The message names the offending gate.
class FeatureGateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class FeatureGate {
 public:
  FeatureGate() = default;
  /// Throws std::invalid_argument on duplicate names. AllAlpha/AllBeta are always known.
  explicit FeatureGate(std::vector<FeatureSpec> known);

  /// Applies "A=true,B=false" (whitespace around items allowed, empty string is a no-op).
  /// All-or-nothing: on error nothing changes. Explicit settings win over AllAlpha/AllBeta
  /// regardless of their order.
  void set(std::string_view spec);
  void set(const std::map<std::string, bool>& values);

  /// Throws std::logic_error for a gate this role never declared: that is a koord bug.
  bool enabled(std::string_view name) const;
  bool known(std::string_view name) const;

  /// Every gate's effective value, sorted by name.
  std::map<std::string, bool> effective() const;

  /// One line per gate as kube components print them: "Name=true|false (BETA - default=true)".
  std::vector<std::string> helpLines() const;

  /// "Name=value" for each gate set on the command line to other than its default that no code
  /// has read through enabled() yet. Asked once a role has wired itself up, these are settings
  /// koord accepts (Koordinator's manifests pass them) but that change nothing.
  std::vector<std::string> setButUnread() const;

  /// Records that a gate's code is built but cannot act on this host: `why` names what is
  /// missing (the kernel file). The gate then counts as without effect.
  void markUnavailable(std::string_view name, std::string why) const;

  struct Effect {
    std::string name;
    bool enabled = false;
    /// On, read by the code that implements it, and not marked unavailable.
    bool effective = false;
    /// Why an enabled gate does nothing; empty otherwise.
    std::string why;
  };
  /// Every gate but AllAlpha/AllBeta, sorted by name. Asked once a role has wired itself up:
  /// an enabled gate no code has read has no implementation in koord. Reads nothing through
  /// enabled(), so it changes no answer of setButUnread().
  std::vector<Effect> effects() const;

 private:
  struct ReadLog {
    std::mutex mu;
    std::set<std::string, std::less<>> names;
    std::map<std::string, std::string, std::less<>> unavailable;
  };
  /// enabled() without recording the read.
  bool value(std::string_view name) const;

  std::map<std::string, FeatureSpec, std::less<>> known_;
  std::map<std::string, bool, std::less<>> explicit_;
  std::shared_ptr<ReadLog> read_ = std::make_shared<ReadLog>();
};

}  // namespace koord
