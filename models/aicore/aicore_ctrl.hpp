// SPDX-License-Identifier: MIT
// An AI Core's control and status registers: what the task scheduler writes to start a block
// (code address and size, entry, block id and count, argument base, then START) and what
// anyone may read back (busy, fault, the faulting pc). Register map: docs/peripherals.md.
#pragma once
#include "aicore.hpp"
#include "mmio/mmio.hpp"

namespace dvp::aicore {

class AiCoreCtrl : public mmio::Device {
 public:
  AiCoreCtrl(sc_core::sc_module_name name, AiCore& core, double access_ns);
  std::string device_kind() const override { return "aicore"; }

 private:
  AiCore& core_;
  mmio::Register image_lo_, image_hi_, code_bytes_, entry_, block_id_, block_dim_, args_lo_, args_hi_, start_, status_,
      fault_pc_lo_, fault_pc_hi_;
};

}  // namespace dvp::aicore
