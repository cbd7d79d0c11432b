// SPDX-License-Identifier: MIT
#include "aicore_ctrl.hpp"

namespace dvp::aicore {

AiCoreCtrl::AiCoreCtrl(sc_core::sc_module_name name, AiCore& core, double access_ns)
    : Device(name, 0x40, access_ns),
      core_(core),
      image_lo_(*this, "IMAGE_LO", 0x00, 0, "GM address of the kernel's code, low 32 bits"),
      image_hi_(*this, "IMAGE_HI", 0x04, 0, "GM address of the kernel's code, high 32 bits"),
      code_bytes_(*this, "CODE_BYTES", 0x08, 0, "size of the code"),
      entry_(*this, "ENTRY", 0x0c, 0, "byte offset of the first instruction"),
      block_id_(*this, "BLOCK_ID", 0x10, 0, "the block's id (SPR blockid)"),
      block_dim_(*this, "BLOCK_DIM", 0x14, 1, "the kernel's block count (SPR blockdim)"),
      args_lo_(*this, "ARGS_LO", 0x18, 0, "argument table address (SPR argbase), low 32 bits"),
      args_hi_(*this, "ARGS_HI", 0x1c, 0, "argument table address, high 32 bits"),
      start_(*this, "START", 0x20, 0, "write 1: start the block described above (refused while busy)"),
      status_(*this, "STATUS", 0x24, 0, "bit 0: busy; bit 1: the last block faulted"),
      fault_pc_lo_(*this, "FAULT_PC_LO", 0x28, 0, "pc of the last fault, low 32 bits"),
      fault_pc_hi_(*this, "FAULT_PC_HI", 0x2c, 0, "pc of the last fault, high 32 bits") {
  start_.on_read([] { return 0u; }).on_write([this](std::uint32_t v) {
    if (!(v & 1)) return;
    if (core_.busy()) return start_.reject();  // a block is still running
    Launch l;
    l.image_base = std::uint64_t(image_hi_.value) << 32 | image_lo_.value;
    l.code_bytes = code_bytes_.value;
    l.entry = entry_.value;
    l.block_id = block_id_.value;
    l.block_dim = block_dim_.value;
    l.arg_base = std::uint64_t(args_hi_.value) << 32 | args_lo_.value;
    core_.start(l);
  });
  status_.on_read([this] { return std::uint32_t(core_.busy()) | std::uint32_t(core_.fault().has_value()) << 1; })
      .read_only();
  fault_pc_lo_.on_read([this] { return core_.fault() ? std::uint32_t(core_.fault()->pc) : 0u; }).read_only();
  fault_pc_hi_.on_read([this] { return core_.fault() ? std::uint32_t(core_.fault()->pc >> 32) : 0u; }).read_only();
}

}  // namespace dvp::aicore
