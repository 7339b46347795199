// Strict reading of a plugin's pluginConfig args, member by member, for the decoders of the
// community descheduler's plugins and Koordinator's: the first error stops the rest.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "koord/core/expected.h"
#include "koord/kube/labels.h"
#include "plugins/podfilter/pod_filter.h"

namespace koord::roles::descheduler::pluginkit {

/// Reads members of the args' root object into the args struct, in the order asked, so a document
/// with several faults is refused for the one upstream would name. Each read keeps `out` as it is
/// when the member is absent or null: the struct's initializers are the defaults.
class ArgsReader {
 public:
  /// Absent or null args read as an empty object (every member absent). Anything else must be an
  /// object whose members are all in `known`.
  ArgsReader(const boost::json::value* args, std::initializer_list<std::string_view> known);

  /// namespaces and labelSelector (podfilter::decodeCommonArgs).
  ArgsReader& common(podfilter::CommonArgs& out);
  /// namespaces alone, for args without a labelSelector.
  ArgsReader& namespaces(std::optional<podfilter::Namespaces>& out);
  /// labelSelector alone, compiled so that a bad one is refused here.
  ArgsReader& labelSelector(std::optional<kube::LabelSelector>& out);

  ArgsReader& boolean(std::string_view name, bool& out);
  ArgsReader& int32(std::string_view name, std::int32_t& out);
  ArgsReader& int64(std::string_view name, std::int64_t& out);
  /// metav1.Duration ("5m").
  ArgsReader& duration(std::string_view name, std::chrono::nanoseconds& out);
  ArgsReader& string(std::string_view name, std::string& out);
  /// Go's uint: a negative number does not decode.
  ArgsReader& uint64(std::string_view name, std::uint64_t& out);
  ArgsReader& strings(std::string_view name, std::vector<std::string>& out);
  /// For a list upstream tells apart when set but empty.
  ArgsReader& strings(std::string_view name, std::optional<std::vector<std::string>>& out);

  /// Refuses the args with "<name>: <message>" when the member is absent or null.
  ArgsReader& require(std::string_view name, std::string_view message);

  /// `out = *decode(root object)`, for a member with a shape of its own.
  template <typename T, typename Decode>
  ArgsReader& decoded(T& out, Decode&& decode) {
    return step([&](const boost::json::object& root) -> Expected<void> {
      auto value = decode(root);
      if (!value)
        return value.error();
      out = std::move(*value);
      return {};
    });
  }

  /// `check()` (answering Expected<void>) when every read so far succeeded: a validation that
  /// upstream makes between two reads stays between them.
  template <typename Check>
  ArgsReader& then(Check&& check) {
    return step([&](const boost::json::object&) { return check(); });
  }

  /// The first error, if any.
  Expected<void> status() const;

  /// `args` once every read succeeded; the first error otherwise.
  template <typename T>
  Expected<T> finish(T args) const {
    if (error_)
      return *error_;
    return args;
  }

 private:
  /// `read(root object)`, answering Expected<void>, unless an earlier read failed.
  template <typename Read>
  ArgsReader& step(Read&& read) {
    if (error_)
      return *this;
    if (auto ok = read(*root_); !ok)
      error_ = ok.error();
    return *this;
  }

  /// Set unless the constructor refused the args.
  const boost::json::object* root_ = nullptr;
  std::optional<Error> error_;
};

}  // namespace koord::roles::descheduler::pluginkit
