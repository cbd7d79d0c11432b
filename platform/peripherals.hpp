// SPDX-License-Identifier: MIT
// The peripherals' window: where each device of the CPU subsystem sits relative to
// platform.cpu.mmio_base, and the generated firmware header and register-map document.
#pragma once
#include <cstdint>
#include <string>

namespace dvp::platform {

constexpr std::uint64_t kIrqOffset = 0x0000, kTimerOffset = 0x1000, kSimctrlOffset = 0x2000;
constexpr std::uint64_t kUartOffset = 0x3000, kUartStride = 0x100, kTsOffset = 0x4000, kDvppOffset = 0x5000;
constexpr unsigned kTimerFirstLine = 0;                                         // timer channel c: interrupt line c
constexpr unsigned kTsIrqLine = 16;                                             // the task scheduler's completions
constexpr unsigned kAicpuFirstLine = 17;                                        // AI CPU i's mailbox: line 17 + i
constexpr unsigned kDvppIrqLine = 31;                                           // DVPP's completions
constexpr std::uint64_t kAicoreCtrlOffset = 0x8000, kAicoreCtrlStride = 0x100;  // AI Core i's control block

// firmware/bsp/soc_regs.h for a window at `mmio_base` (`dvp regs header`).
std::string peripherals_header(std::uint64_t mmio_base);
// docs/peripherals.md (`dvp regs markdown`).
std::string peripherals_markdown();

}  // namespace dvp::platform
