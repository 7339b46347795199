// Kubernetes label selectors: the metav1.LabelSelector API shape, the ?labelSelector= string
// syntax (parsed and printed as k8s.io/apimachinery/pkg/labels does) and label key/value rules.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"

namespace koord::kube {

/// An object's labels. A std::map (sorted, transparent lookups by string_view) rather than a
/// flat vector: label sets are small, built once at projection and then only looked up.
using Labels = std::map<std::string, std::string, std::less<>>;
/// An object's annotations: the same shape, kept apart in name so signatures say which.
using Annotations = Labels;

/// nullopt when `key` is a valid qualified name: [prefix/]name, prefix a DNS-1123 subdomain of
/// at most 253 characters, name at most 63 of [A-Za-z0-9_.-] starting and ending alphanumeric.
/// Otherwise why not.
std::optional<std::string> validateLabelKey(std::string_view key);
/// nullopt when `value` is a valid label value: empty, or at most 63 characters as a name.
std::optional<std::string> validateLabelValue(std::string_view value);
bool isDns1123Subdomain(std::string_view value);

enum class SelectorOperator {
  kIn,
  kNotIn,
  kEquals,        // a=b
  kDoubleEquals,  // a==b, kept apart from kEquals so that printing round-trips
  kNotEquals,
  kExists,
  kDoesNotExist,
  kGreaterThan,  // a>5: integer comparison, used by node affinity's Gt
  kLessThan,
};

/// One validated clause of a selector.
class Requirement {
 public:
  /// Validates as labels.NewRequirement: key and values per the label rules; In/NotIn need
  /// values, =/==/!= exactly one, Exists/DoesNotExist none, >/< one integer.
  static Expected<Requirement> make(std::string key, SelectorOperator op,
                                    std::vector<std::string> values);

  bool matches(const Labels& labels) const;
  std::string toString() const;

  const std::string& key() const { return key_; }
  SelectorOperator op() const { return op_; }
  /// Sorted and without duplicates.
  const std::vector<std::string>& values() const { return values_; }

  friend bool operator==(const Requirement&, const Requirement&) = default;

 private:
  friend class Selector;  // fromSet builds trusted requirements without revalidating
  Requirement(std::string key, SelectorOperator op, std::vector<std::string> values);

  std::string key_;
  SelectorOperator op_;
  std::vector<std::string> values_;
};

/// Requirements ANDed together, kept sorted by key so that printing is deterministic.
class Selector {
 public:
  /// Matches everything (an empty selector).
  Selector() = default;
  static Selector everything() { return Selector{}; }
  /// Matches nothing: what a nil metav1.LabelSelector means.
  static Selector nothing();

  /// The string syntax: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`,
  /// `a<1`, comma-separated. Errors name the offending token.
  static Expected<Selector> parse(std::string_view text);
  /// Equality on every pair; the pairs are trusted (they come from an object's labels).
  static Selector fromSet(const Labels& set);

  bool matches(const Labels& labels) const;
  /// True for the match-everything selector.
  bool empty() const { return !nothing_ && requirements_.empty(); }
  bool matchesNothing() const { return nothing_; }
  /// Parses back to an equal selector. The match-nothing selector prints as "" (as in
  /// Kubernetes), which parses as everything: never send it to the API server.
  std::string toString() const;

  Selector& add(Requirement requirement);
  const std::vector<Requirement>& requirements() const { return requirements_; }

  friend bool operator==(const Selector&, const Selector&) = default;

 private:
  std::vector<Requirement> requirements_;
  bool nothing_ = false;
};

/// metav1.LabelSelectorOperator.
enum class LabelSelectorOperator { kIn, kNotIn, kExists, kDoesNotExist };

struct LabelSelectorRequirement {
  std::string key;
  LabelSelectorOperator op = LabelSelectorOperator::kIn;
  std::vector<std::string> values;

  friend bool operator==(const LabelSelectorRequirement&,
                         const LabelSelectorRequirement&) = default;
};

/// metav1.LabelSelector: matchLabels and matchExpressions, ANDed.
struct LabelSelector {
  Labels match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;

  friend bool operator==(const LabelSelector&, const LabelSelector&) = default;
};

/// As metav1.LabelSelectorAsSelector: an empty selector matches everything; pass nullptr for an
/// absent (nil) one, which matches nothing. Errors name the bad key or value.
Expected<Selector> toSelector(const LabelSelector* selector);
inline Expected<Selector> toSelector(const LabelSelector& selector) {
  return toSelector(&selector);
}

std::string_view toString(SelectorOperator op);
std::string_view toString(LabelSelectorOperator op);

}  // namespace koord::kube
