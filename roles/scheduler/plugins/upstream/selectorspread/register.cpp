#include "plugins/upstream/selectorspread/register.h"

#include <string>
#include <utility>

#include "framework/plugin_factory.h"
#include "plugins/upstream/helper/spread_informers.h"
#include "plugins/upstream/selectorspread/selector_spread.h"

namespace koord::roles::scheduler::upstream {

void registerSelectorSpread(PluginRegistry& registry) {
  PluginFactory factory = makePluginFactory<SelectorSpread>(kSelectorSpreadName);
  helper::declareSpreadSelectorInformers(factory);
  registry.add(std::string(kSelectorSpreadName), std::move(factory));
}

}  // namespace koord::roles::scheduler::upstream
