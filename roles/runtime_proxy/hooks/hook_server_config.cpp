#include "hooks/hook_server_config.h"

#include <fmt/format.h>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <utility>

namespace koord::roles::runtime_proxy {

namespace {

constexpr std::array<std::pair<std::string_view, RuntimeHookType>, 8> kHookTypes = {{
    {"PreRunPodSandbox", RuntimeHookType::kPreRunPodSandbox},
    {"PostStopPodSandbox", RuntimeHookType::kPostStopPodSandbox},
    {"PreCreateContainer", RuntimeHookType::kPreCreateContainer},
    {"PreStartContainer", RuntimeHookType::kPreStartContainer},
    {"PostStartContainer", RuntimeHookType::kPostStartContainer},
    {"PreUpdateContainerResources", RuntimeHookType::kPreUpdateContainerResources},
    {"PostStopContainer", RuntimeHookType::kPostStopContainer},
    {"PreRemoveRunPodSandbox", RuntimeHookType::kPreRemoveRunPodSandbox},
}};

kube::Error fieldError(std::string_view field, std::string_view what) {
  return kube::makeKubeError(fmt::format("{}: {}", field, what));
}

}  // namespace

std::string_view toString(RuntimeHookType type) {
  for (const auto& [name, t] : kHookTypes) {
    if (t == type)
      return name;
  }
  return "unknown";
}

bool isPreHook(RuntimeHookType type) {
  return toString(type).starts_with("Pre");
}

HookedCall hookedCallOf(RuntimeHookType type) {
  switch (type) {
    case RuntimeHookType::kPreRunPodSandbox:
      return HookedCall::kRunPodSandbox;
    case RuntimeHookType::kPostStopPodSandbox:
      return HookedCall::kStopPodSandbox;
    case RuntimeHookType::kPreCreateContainer:
      return HookedCall::kCreateContainer;
    case RuntimeHookType::kPreStartContainer:
    case RuntimeHookType::kPostStartContainer:
      return HookedCall::kStartContainer;
    case RuntimeHookType::kPreUpdateContainerResources:
      return HookedCall::kUpdateContainerResources;
    case RuntimeHookType::kPostStopContainer:
      return HookedCall::kStopContainer;
    case RuntimeHookType::kPreRemoveRunPodSandbox:
      return HookedCall::kNone;
  }
  return HookedCall::kNone;
}

kube::Expected<HookServerConfig> parseHookServerConfig(std::string_view json) {
  boost::system::error_code ec;
  boost::json::value doc = boost::json::parse(json, ec);
  if (ec)
    return kube::makeKubeError(fmt::format("not JSON: {}", ec.message()));
  if (!doc.is_object())
    return kube::makeKubeError("want a JSON object");
  HookServerConfig out;
  bool has_endpoint = false;
  for (const auto& [key, value] : doc.as_object()) {
    if (key == "remote-endpoint") {
      if (!value.is_string())
        return fieldError(key, "want a string");
      std::string path(value.as_string());
      if (path.starts_with("unix://"))
        path = path.substr(7);
      if (path.empty() || path.front() != '/')
        return fieldError(key, fmt::format("{:?} is not an absolute unix socket path", path));
      out.remote_endpoint = std::move(path);
      has_endpoint = true;
    } else if (key == "failure-policy") {
      if (!value.is_string())
        return fieldError(key, "want a string");
      const std::string_view policy = value.as_string();
      if (policy == "Fail")
        out.failure_policy = FailurePolicy::kFail;
      else if (policy == "Ignore" || policy.empty())
        out.failure_policy = FailurePolicy::kIgnore;
      else
        return fieldError(key, fmt::format("{:?}: want Fail or Ignore", policy));
    } else if (key == "runtime-hooks") {
      if (!value.is_array())
        return fieldError(key, "want a list of hook types");
      for (const auto& h : value.as_array()) {
        if (!h.is_string())
          return fieldError(key, "want strings");
        const std::string_view name = h.as_string();
        bool known = false;
        for (const auto& [n, t] : kHookTypes) {
          if (n == name) {
            out.hooks.push_back(t);
            known = true;
          }
        }
        if (!known)
          return fieldError(key, fmt::format("unknown hook type {:?}", name));
      }
    } else {
      return kube::makeKubeError(fmt::format("unknown field {:?}", std::string_view(key)));
    }
  }
  if (!has_endpoint)
    return fieldError("remote-endpoint", "required");
  return out;
}

}  // namespace koord::roles::runtime_proxy
