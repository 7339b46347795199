#include "statesinformer/host_application.h"

#include <boost/json.hpp>

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "koord/cgroup/kubepods_path.h"
#include "koord/kube/json_fields.h"

namespace koord::roles::koordlet {

namespace json = boost::json;
namespace jf = kube::jsonfields;

namespace {

bool componentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-' || c == '@';
}

// A value from the cluster, quoted and escaped for a log line, cut short so a huge one cannot
// flood the log.
std::string quotedValue(std::string_view value) {
  constexpr std::size_t kMax = 64;
  if (value.size() <= kMax)
    return fmt::format("{:?}", std::string(value));
  return fmt::format("{:?}...", std::string(value.substr(0, kMax)));
}

// Why `part` may not be one component of a cgroup path, or "" when it may.
std::string componentFault(std::string_view part) {
  if (part.empty())
    return "an empty component";
  // NAME_MAX: the kernel refuses a longer directory name anyway, and the log is spared it.
  if (part.size() > 255)
    return fmt::format("a component of {} bytes, over 255", part.size());
  if (part == "." || part == "..")
    return fmt::format("component {}", quotedValue(part));
  if (!std::all_of(part.begin(), part.end(), componentChar))
    return fmt::format("component {} has a character outside [A-Za-z0-9._@-]", quotedValue(part));
  return "";
}

// A cgroupPath part from the cluster: leading and trailing '/' dropped (Koordinator joins the
// parts as paths, so "nginx/" is the same directory), every component checked. Nothing built from
// a value that fails here ever reaches the file system.
kube::Expected<std::string> cleanPath(std::string_view path, std::string_view field) {
  const auto first = path.find_first_not_of('/');
  if (first == std::string_view::npos)
    return std::string();
  const auto last = path.find_last_not_of('/');
  const auto trimmed = path.substr(first, last - first + 1);
  std::size_t start = 0;
  while (true) {
    const auto slash = trimmed.find('/', start);
    const auto part =
        trimmed.substr(start, slash == std::string_view::npos ? trimmed.npos : slash - start);
    if (auto fault = componentFault(part); !fault.empty())
      return kube::makeKubeError(
          fmt::format("cgroupPath.{} {}: {}", field, quotedValue(path), fault));
    if (slash == std::string_view::npos)
      return std::string(trimmed);
    start = slash + 1;
  }
}

kube::Expected<HostAppCgroupBase> parseBase(std::string_view base) {
  // An empty base is the root, as in Koordinator.
  if (base.empty() || base == "CgroupRoot")
    return HostAppCgroupBase::kCgroupRoot;
  if (base == "Kubepods")
    return HostAppCgroupBase::kKubepods;
  if (base == "KubepodsBurstable")
    return HostAppCgroupBase::kKubepodsBurstable;
  if (base == "KubepodsBesteffort")
    return HostAppCgroupBase::kKubepodsBesteffort;
  return kube::makeKubeError(
      fmt::format("cgroupPath.base {}: not CgroupRoot, Kubepods, "
                  "KubepodsBurstable or KubepodsBesteffort",
                  quotedValue(base)));
}

kube::Expected<void> decodeCgroupPath(const json::object& o, HostApplication& app) {
  auto base = jf::stringField(o, "base", "cgroupPath");
  if (!base)
    return base.error();
  auto parsed = parseBase(*base);
  if (!parsed)
    return parsed.error();
  auto parent = jf::stringField(o, "parentDir", "cgroupPath");
  if (!parent)
    return parent.error();
  auto relative = jf::stringField(o, "relativePath", "cgroupPath");
  if (!relative)
    return relative.error();
  auto parent_dir = cleanPath(*parent, "parentDir");
  if (!parent_dir)
    return parent_dir.error();
  auto relative_path = cleanPath(*relative, "relativePath");
  if (!relative_path)
    return relative_path.error();
  // Both empty would name the base itself: the root (the whole node) or a kubelet cgroup that
  // holds pods, which would then be subtracted twice.
  if (parent_dir->empty() && relative_path->empty())
    return kube::makeKubeError("cgroupPath: neither parentDir nor relativePath names a directory");
  app.has_cgroup_path = true;
  app.base = *parsed;
  app.parent_dir = std::move(*parent_dir);
  app.relative_path = std::move(*relative_path);
  app.under_kube_besteffort = app.base == HostAppCgroupBase::kKubepodsBesteffort;
  return {};
}

kube::Expected<HostApplication> decodeEntry(const json::object& o) {
  HostApplication app;
  auto name = jf::stringField(o, "name", "");
  if (!name)
    return name.error();
  if (name->empty())
    return kube::makeKubeError("name: empty");
  // The name is a path component when cgroupPath is absent, and the app's key in the metric
  // cache and in logs always, so it is held to the component grammar either way.
  if (auto fault = componentFault(*name); !fault.empty())
    return kube::makeKubeError(fmt::format("name {}: {}", quotedValue(*name), fault));
  app.name = std::move(*name);
  auto priority = jf::stringField(o, "priority", "");
  if (!priority)
    return priority.error();
  app.priority = apis::priorityClassByName(*priority);
  auto qos = jf::stringField(o, "qos", "");
  if (!qos)
    return qos.error();
  app.qos = apis::qosClassByName(*qos);
  auto cgroup_path = jf::objectField(o, "cgroupPath", "");
  if (!cgroup_path)
    return cgroup_path.error();
  if (*cgroup_path != nullptr) {
    if (auto r = decodeCgroupPath(**cgroup_path, app); !r)
      return r.error();
  }
  return app;
}

}  // namespace

HostApplications decodeHostApplications(const json::value* v) {
  HostApplications out;
  if (v == nullptr || v->is_null())
    return out;
  if (!v->is_array()) {
    out.skipped.push_back(
        {"hostApplications", jf::typeError("spec.hostApplications", "array", *v).message});
    return out;
  }
  std::set<std::string, std::less<>> names;
  const auto& array = v->as_array();
  for (std::size_t i = 0; i < array.size(); ++i) {
    const auto path = jf::indexPath("spec.hostApplications", i);
    // The key the skip is logged under: the name when it is one we would accept.
    std::string key = fmt::format("hostApplications[{}]", i);
    if (!array[i].is_object()) {
      out.skipped.push_back({key, jf::typeError(path, "object", array[i]).message});
      continue;
    }
    if (const auto* n = jf::field(array[i].as_object(), "name");
        n && n->is_string() && !n->as_string().empty() &&
        componentFault(std::string_view(n->as_string())).empty())
      key = std::string(n->as_string());
    auto app = decodeEntry(array[i].as_object());
    if (!app) {
      out.skipped.push_back({key, fmt::format("{}: {}", path, app.error().message)});
      continue;
    }
    // The name keys the app's series; a second entry of the same name would mix two cgroups.
    if (!names.insert(app->name).second) {
      out.skipped.push_back({key, fmt::format("{}: name {} repeats an earlier entry's", path,
                                              quotedValue(app->name))});
      continue;
    }
    out.apps.push_back(std::move(*app));
  }
  return out;
}

std::string hostAppCgroupDir(cgroup::CgroupDriver driver, const HostApplication& app) {
  std::string base;
  std::vector<std::string_view> parts;
  if (!app.has_cgroup_path) {
    switch (app.qos) {
      case apis::QoSClass::kLSE:
      case apis::QoSClass::kLSR:
      case apis::QoSClass::kLS:
        parts.push_back("host-latency-sensitive");
        break;
      case apis::QoSClass::kBE:
        parts.push_back("host-best-effort");
        break;
      default:
        break;
    }
    parts.push_back(app.name);
  } else {
    switch (app.base) {
      case HostAppCgroupBase::kCgroupRoot:
        break;
      case HostAppCgroupBase::kKubepods:
        base = cgroup::kubepodsDir(driver);
        break;
      case HostAppCgroupBase::kKubepodsBurstable:
        base = cgroup::qosTierDir(driver, cgroup::QoSTier::kBurstable);
        break;
      case HostAppCgroupBase::kKubepodsBesteffort:
        base = cgroup::qosTierDir(driver, cgroup::QoSTier::kBestEffort);
        break;
    }
    if (!base.empty())
      parts.push_back(base);
    if (!app.parent_dir.empty())
      parts.push_back(app.parent_dir);
    if (!app.relative_path.empty())
      parts.push_back(app.relative_path);
  }
  std::string dir;
  for (auto part : parts) {
    if (!dir.empty())
      dir += '/';
    dir += part;
  }
  return dir;
}

}  // namespace koord::roles::koordlet
