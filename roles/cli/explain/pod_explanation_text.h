// How `koord explain pod` prints a Scheduler::explain answer: per node the first plugin that
// refused the pod and why, or its scores; then one line that sums the refusals up by plugin.
#pragma once

#include <boost/json/value.hpp>

#include <string>

#include "scheduler.h"

namespace koord::roles::cli {

/// "fits 2 of 3 nodes, best node-b (score 187); 1 refuses at LoadAwareScheduling (...)" or
/// "fits nowhere: 40 nodes refuse at LoadAwareScheduling (...), 10 at ElasticQuota (...)": each
/// plugin with its count and its first node's reason, most refusals first.
std::string explanationSummary(const scheduler::PodExplanation& e);

/// NODE, RESULT (fits or the refusing plugin), REASON, SCORE (total, and each plugin's
/// weight x score), by score then name, refused nodes after; then the summary line.
std::string explanationTable(const scheduler::PodExplanation& e);

boost::json::value explanationJson(const std::string& pod_key, const scheduler::PodExplanation& e);

}  // namespace koord::roles::cli
