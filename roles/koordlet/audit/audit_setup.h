// How the koordlet turns its -audit-* flags and the AuditEvents and AuditEventsHTTPHandler gates
// into the auditor and its handler on the koordlet's HTTP server, as Koordinator's main does.
#pragma once

#include <memory>

#include "audit/auditor.h"

namespace koord {
class FeatureGate;
class FlagSet;
}  // namespace koord
namespace koord::http {
class Server;
}

namespace koord::roles::koordlet {

struct KoordletOptions;

namespace audit {

/// The auditor with AuditEvents on; null with it off, after one warning per -audit-* flag the
/// command line set (they do nothing then). Throws app::ConfigError for a bad -audit-* value or
/// a log directory that cannot be made.
std::shared_ptr<Auditor> koordletAuditor(const KoordletOptions& o, const FeatureGate& gates,
                                         const FlagSet& flags);

/// With AuditEventsHTTPHandler on, serves kAuditHttpPath on `server` (call before it starts):
/// the auditor's pages, or, without an auditor, an empty 200 as Koordinator's empty auditor
/// answers (the gate is then marked as without effect).
void addAuditHandler(http::Server& server, std::shared_ptr<Auditor> auditor,
                     const FeatureGate& gates);

}  // namespace audit
}  // namespace koord::roles::koordlet
