#include "explain/pod_explanation_text.h"

#include <fmt/format.h>
#include <boost/json.hpp>

#include <algorithm>
#include <map>

#include "output/table.h"

namespace koord::roles::cli {
namespace json = boost::json;
using scheduler::PodExplanation;

namespace {

std::string reasonOf(const scheduler::Status& s) {
  std::string out;
  for (const auto& r : s.reasons())
    out += (out.empty() ? "" : "; ") + r;
  return out.empty() ? s.message() : out;
}

std::string pluginOf(const scheduler::Status& s) {
  return s.plugin().empty() ? std::string("(unnamed)") : s.plugin();
}

std::vector<const PodExplanation::NodeResult*> ranked(const PodExplanation& e) {
  std::vector<const PodExplanation::NodeResult*> out;
  for (const auto& n : e.nodes)
    out.push_back(&n);
  std::stable_sort(out.begin(), out.end(), [](const auto* a, const auto* b) {
    if (a->filter.ok() != b->filter.ok())
      return a->filter.ok();
    if (a->filter.ok() && a->total != b->total)
      return a->total > b->total;
    return a->node < b->node;
  });
  return out;
}

}  // namespace

std::string explanationSummary(const PodExplanation& e) {
  if (!e.pre_filter.ok()) {
    return fmt::format("fits nowhere: {} refuses the pod before any node: {}",
                       pluginOf(e.pre_filter), reasonOf(e.pre_filter));
  }
  struct Refusal {
    int count = 0;
    std::string first_reason;
  };
  std::map<std::string, Refusal> refusals;
  std::size_t fits = 0;
  for (const auto& n : e.nodes) {
    if (n.filter.ok()) {
      ++fits;
      continue;
    }
    Refusal& r = refusals[pluginOf(n.filter)];
    if (r.count++ == 0)
      r.first_reason = reasonOf(n.filter);
  }
  std::vector<std::pair<std::string, Refusal>> sorted(refusals.begin(), refusals.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.count > b.second.count; });
  std::string parts;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const auto& [plugin, r] = sorted[i];
    if (i == 0) {
      parts = fmt::format("{} {} at {} ({})", r.count,
                          r.count == 1 ? "node refuses" : "nodes refuse", plugin, r.first_reason);
    } else {
      parts += fmt::format(", {} at {} ({})", r.count, plugin, r.first_reason);
    }
  }
  if (e.nodes.empty())
    return "fits nowhere: the snapshot has no nodes";
  if (fits == 0)
    return "fits nowhere: " + parts;
  const auto best = ranked(e).front();
  return fmt::format("fits {} of {} node(s), best {} (score {}){}{}", fits, e.nodes.size(),
                     best->node, best->total, parts.empty() ? "" : "; ", parts);
}

std::string explanationTable(const PodExplanation& e) {
  Table table({"NODE", "RESULT", "REASON", "SCORE"});
  for (const auto* n : ranked(e)) {
    if (!n->filter.ok()) {
      table.addRow({n->node, pluginOf(n->filter), reasonOf(n->filter), "-"});
      continue;
    }
    std::string parts;
    for (const auto& p : n->scores) {
      parts += fmt::format("{}{} {}x{}", parts.empty() ? "" : ", ", p.plugin, p.weight,
                           p.scores.empty() ? 0 : p.scores.front());
    }
    table.addRow(
        {n->node, "fits", "-",
         parts.empty() ? fmt::format("{}", n->total) : fmt::format("{} ({})", n->total, parts)});
  }
  return table.render() + explanationSummary(e) + "\n";
}

json::value explanationJson(const std::string& pod_key, const PodExplanation& e) {
  json::array nodes;
  for (const auto* n : ranked(e)) {
    json::object o{{"name", n->node}, {"fits", n->filter.ok()}};
    if (!n->filter.ok()) {
      o["plugin"] = pluginOf(n->filter);
      o["reason"] = reasonOf(n->filter);
    } else {
      json::array scores;
      for (const auto& p : n->scores) {
        scores.push_back(json::object{{"plugin", p.plugin},
                                      {"weight", p.weight},
                                      {"score", p.scores.empty() ? 0 : p.scores.front()}});
      }
      o["score"] = n->total;
      o["scores"] = std::move(scores);
    }
    nodes.push_back(std::move(o));
  }
  json::object out{{"pod", pod_key}, {"profile", e.profile}};
  if (!e.pre_filter.ok())
    out["preFilter"] =
        json::object{{"plugin", pluginOf(e.pre_filter)}, {"reason", reasonOf(e.pre_filter)}};
  out["nodes"] = std::move(nodes);
  out["summary"] = explanationSummary(e);
  return out;
}

}  // namespace koord::roles::cli
