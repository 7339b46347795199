// YAML to JSON the way kube-scheduler reads --config (sigs.k8s.io/yaml over go-yaml v2, strict):
// YAML 1.1 scalar resolution, map keys turned into strings, duplicate keys refused.
#pragma once

#include <boost/json/value.hpp>

#include <string_view>

#include "koord/kube/error.h"

namespace koord::kube {

/// One YAML document (JSON is YAML too) as JSON. Plain scalars resolve as go-yaml v2 does:
///  - "", ~, null, Null, NULL -> null;
///  - y Y yes Yes YES true True TRUE on On ON -> true; n N no No NO false False FALSE off Off OFF
///    -> false;
///  - Go integer syntax with '_' ignored (0x.., 0o.., 0b.., a leading 0 is octal) -> integer;
///  - YAML floats -> number; integral ones become integers, as Go's encoder writes them
///    (so "1e3" reads as 1000);
///  - anything else stays a string, as does every quoted or block scalar and !!str.
/// Map keys become strings ("yes" -> "true", 10 -> "10"); "<<" merges maps as go-yaml does.
/// Timestamps stay the text they were written as (sigs.k8s.io/yaml would reformat them).
/// Errors name the path and line: malformed YAML, more than one document, a duplicate key, a
/// null or non-scalar key, .inf/.nan values (JSON cannot hold them), an unsupported !!tag.
/// An empty document is null.
Expected<boost::json::value> yamlToJson(std::string_view text);

}  // namespace koord::kube
