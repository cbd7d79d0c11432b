// SPDX-License-Identifier: MIT
#include "system.hpp"

#include "error.hpp"

namespace dvp {

namespace {
// The System being built, for models that have no System among their parents. Set only by
// Scope, for the duration of a build, like SystemC's own stack of modules under construction.
System* g_building = nullptr;
}  // namespace

void System::fail(const std::string& what) {
  if (!failure_.empty()) return;
  failure_ = what;
  sc_core::sc_stop();
}

const std::shared_ptr<HostLane>& System::host_lane() {
  if (!lane_) lane_ = std::make_shared<HostLane>();
  return lane_;
}

System::Scope::Scope(System& s) : previous_(g_building) { g_building = &s; }
System::Scope::~Scope() { g_building = previous_; }

System& system_of(const sc_core::sc_object& o) {
  for (const sc_core::sc_object* p = o.get_parent_object(); p; p = p->get_parent_object())
    if (auto* s = dynamic_cast<System*>(const_cast<sc_core::sc_object*>(p))) return *s;
  if (g_building) return *g_building;
  throw Error(std::string(o.name()) + ": built outside any system (a dvp::System module, or a System::Scope)");
}

}  // namespace dvp
