// ArgsReader: each member read with the strict field reads, relative to the args' root.
#include "plugins/pluginkit/args_reader.h"

#include <boost/json.hpp>

#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"

namespace koord::roles::descheduler::pluginkit {

namespace json = boost::json;
namespace strict = kube::strict;
namespace jsonfields = kube::jsonfields;

namespace {

// Every member is read at the root: errors name the member alone.
constexpr std::string_view kRoot;

// A strict read's value into `out`; absent or null (nullopt) keeps the default there.
template <typename T, typename U>
Expected<void> assignPresent(Expected<std::optional<U>> read, T& out) {
  if (!read)
    return read.error();
  if (*read)
    out = std::move(**read);
  return {};
}

// A list of strings into `out` (a vector, or an optional one that only a list present sets).
template <typename Out>
Expected<void> assignList(const json::object& o, std::string_view name, Out& out) {
  if (jsonfields::field(o, name) == nullptr)
    return {};
  auto list = jsonfields::stringList(o, name, kRoot);
  if (!list)
    return list.error();
  out = std::move(*list);
  return {};
}

}  // namespace

ArgsReader::ArgsReader(const json::value* args, std::initializer_list<std::string_view> known) {
  static const json::object kEmpty;
  if (args == nullptr || args->is_null()) {
    root_ = &kEmpty;
    return;
  }
  auto root = strict::asObject(*args, "args");
  if (!root) {
    error_ = root.error();
    return;
  }
  if (auto ok = strict::rejectUnknownFields(**root, known, kRoot); !ok) {
    error_ = ok.error();
    return;
  }
  root_ = *root;
}

ArgsReader& ArgsReader::common(podfilter::CommonArgs& out) {
  return decoded(out, [](const json::object& o) { return podfilter::decodeCommonArgs(o); });
}

ArgsReader& ArgsReader::namespaces(std::optional<podfilter::Namespaces>& out) {
  return decoded(out, [](const json::object& o) { return podfilter::decodeNamespaces(o); });
}

ArgsReader& ArgsReader::labelSelector(std::optional<kube::LabelSelector>& out) {
  return decoded(out, [](const json::object& o) { return podfilter::decodeLabelSelector(o); });
}

ArgsReader& ArgsReader::boolean(std::string_view name, bool& out) {
  return step(
      [&](const json::object& o) { return assignPresent(strict::boolField(o, name, kRoot), out); });
}

ArgsReader& ArgsReader::int32(std::string_view name, std::int32_t& out) {
  return step([&](const json::object& o) {
    return assignPresent(strict::int32Field(o, name, kRoot), out);
  });
}

ArgsReader& ArgsReader::int64(std::string_view name, std::int64_t& out) {
  return step([&](const json::object& o) {
    return assignPresent(strict::int64Field(o, name, kRoot), out);
  });
}

ArgsReader& ArgsReader::duration(std::string_view name, std::chrono::nanoseconds& out) {
  return step([&](const json::object& o) {
    return assignPresent(strict::durationField(o, name, kRoot), out);
  });
}

ArgsReader& ArgsReader::string(std::string_view name, std::string& out) {
  return step([&](const json::object& o) {
    return assignPresent(strict::stringField(o, name, kRoot), out);
  });
}

ArgsReader& ArgsReader::uint64(std::string_view name, std::uint64_t& out) {
  return step([&](const json::object& o) -> Expected<void> {
    auto v = strict::int64Field(o, name, kRoot);
    if (!v)
      return v.error();
    if (*v && **v < 0)
      return strict::fieldError(name, "must not be negative");
    if (*v)
      out = static_cast<std::uint64_t>(**v);
    return {};
  });
}

ArgsReader& ArgsReader::strings(std::string_view name, std::vector<std::string>& out) {
  return step([&](const json::object& o) { return assignList(o, name, out); });
}

ArgsReader& ArgsReader::strings(std::string_view name,
                                std::optional<std::vector<std::string>>& out) {
  return step([&](const json::object& o) { return assignList(o, name, out); });
}

ArgsReader& ArgsReader::require(std::string_view name, std::string_view message) {
  return step([&](const json::object& o) -> Expected<void> {
    if (jsonfields::field(o, name) == nullptr)
      return strict::fieldError(name, message);
    return {};
  });
}

Expected<void> ArgsReader::status() const {
  if (error_)
    return *error_;
  return {};
}

}  // namespace koord::roles::descheduler::pluginkit
