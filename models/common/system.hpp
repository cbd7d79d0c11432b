// SPDX-License-Identifier: MIT
// The system a model belongs to: the owner of its trace, its statistics and its record of
// TLM protocol checks. The Soc is one; a test bench can be one. A model finds its system when
// it is built: the nearest SystemC parent that is a System, or else the System being built
// (System::Scope, for models built at the top level, as unit tests do). Nothing is
// process-wide: two systems in one process keep their traces and statistics apart.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include <systemc>

#include "host_lane.hpp"
#include "stats.hpp"
#include "trace.hpp"

namespace dvp {

class System {
 public:
  System() = default;
  System(const System&) = delete;
  System& operator=(const System&) = delete;
  virtual ~System() = default;

  Tracer& tracer() { return tracer_; }
  stats::Registry& stats() { return stats_; }
  const stats::Registry& stats() const { return stats_; }

  // What the TLM base-protocol checkers on this system's bindings found (models/tlmcheck).
  struct ProtocolRecord {
    std::string first;  // the first violation, or ""
    std::uint64_t violations = 0, checked = 0;
  };
  ProtocolRecord& protocol() { return protocol_; }

  // An error a model finds while simulating, inside a SystemC process: an exception there would
  // unwind a coroutine's stack and reach the caller wrapped in a SystemC report. The first is
  // kept and the simulation stops; the run ends with it (exit 3).
  void fail(const std::string& what);
  const std::string& failure() const { return failure_; }

  // The host thread its models' deferred arithmetic runs on (host_lane.hpp), made when first
  // asked for. Shared: a model keeps it for as long as it has jobs on it.
  const std::shared_ptr<HostLane>& host_lane();

  // While a Scope lives, models built outside any System module belong to `s`.
  class Scope {
   public:
    explicit Scope(System& s);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    System* previous_;
  };

 private:
  Tracer tracer_;
  stats::Registry stats_;
  ProtocolRecord protocol_;
  std::string failure_;
  std::shared_ptr<HostLane> lane_;
};

// The system `o` belongs to; throws dvp::Error naming `o` when it belongs to none.
System& system_of(const sc_core::sc_object& o);

}  // namespace dvp
