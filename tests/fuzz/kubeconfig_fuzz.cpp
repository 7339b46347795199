// A kubeconfig is the operator's file, but it is often generated or copied from elsewhere, and
// its *-data fields are base64. The loader only reads from a path, so each input is written to a
// file in a directory of this process's own (relative paths in it then point at nothing).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "koord/kube/kubeconfig.h"

namespace {

const std::string& kubeconfigPath() {
  static const std::string path = [] {
    std::string dir =
        (std::filesystem::temp_directory_path() / "koord-kubeconfig-fuzz-XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr)
      std::abort();
    return dir + "/config";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  {
    std::ofstream out(kubeconfigPath(), std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  (void)koord::kube::loadKubeconfig(kubeconfigPath());
  (void)koord::kube::loadKubeconfig(kubeconfigPath(), "other");
  // base64 must give back exactly what it was given, for the *-data fields.
  auto decoded = koord::kube::decodeBase64(koord::kube::encodeBase64(text));
  if (!decoded || *decoded != text)
    std::abort();
  (void)koord::kube::decodeBase64(text);
  return 0;
}
