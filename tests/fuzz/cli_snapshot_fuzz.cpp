// A snapshot file is whatever an operator, a script or another cluster's dump hands
// `koord top --snapshot`: the whole file is the input. What parses must survive every top
// calculation and printer, write back to a snapshot that reads the same, and print YAML that
// reads back as the structured output it came from.
#include <boost/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "koord/kube/yaml_json.h"
#include "output/output_format.h"
#include "output/yaml_writer.h"
#include "snapshot/cluster_snapshot.h"
#include "top/node_top.h"
#include "top/pod_top.h"

namespace {

void check(bool ok) {
  if (!ok)
    std::abort();
}

void yamlReadsBack(const boost::json::value& v) {
  auto back = koord::kube::yamlToJson(koord::roles::cli::toYaml(v));
  check(back.has_value() && *back == v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace koord::roles::cli;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto snapshot = parseSnapshot(text);
  if (!snapshot)
    return 0;
  auto nodes = topNodes(*snapshot);
  (void)nodeTopTable(nodes);
  yamlReadsBack(nodeTopJson(*snapshot, nodes));
  auto pods = topPods(*snapshot, {});
  (void)podTopTable(pods, false);
  yamlReadsBack(podTopJson(*snapshot, pods));
  const std::string written = formatSnapshot(*snapshot);
  auto again = parseSnapshot(written);
  check(again.has_value() && formatSnapshot(*again) == written);
  return 0;
}
