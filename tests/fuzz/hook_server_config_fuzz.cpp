// /etc/runtime/hookserver.d/*.json: files that whoever deploys a hook server drops on the node;
// runtime-proxy reads every one of them and a bad file must be refused, not crash the proxy.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hooks/hook_server_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace koord::roles::runtime_proxy;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = parseHookServerConfig(text);
  if (!config)
    return 0;
  for (auto hook : config->hooks) {
    (void)toString(hook);
    (void)isPreHook(hook);
    (void)hookedCallOf(hook);
  }
  return 0;
}
