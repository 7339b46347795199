// Whole API objects kept as JSON (informers of CRDs a role reads field by field): a compact DOM
// in one exact-size arena per object, or minified text, both without metadata.managedFields.
#pragma once

#include <boost/json/fwd.hpp>

#include <string>

#include "koord/kube/error.h"

namespace koord::kube {

/// A deep copy of `v` whose nodes share a single allocation, freed with the value.
boost::json::value compactCopy(const boost::json::value& v);

/// The Projection an Informer<boost::json::value> uses to keep whole documents. Drops
/// metadata.managedFields: server-side apply's bookkeeping, no role reads it, and it is often
/// half of an object.
Expected<boost::json::value> wholeDocument(const boost::json::value& v);

/// The same document as minified JSON text (a third of the DOM's size); parse it when needed.
Expected<std::string> wholeDocumentText(const boost::json::value& v);

}  // namespace koord::kube
