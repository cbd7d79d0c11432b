// SPDX-License-Identifier: MIT
// The AI CPU side of the runtime firmware.
#pragma once
#include "bsp.h"
#include "dvp_abi.h"

// Runs on AI CPU `aicpu` (core number `core`) forever: tasks from the scheduler's mailbox.
void aicpu_main(unsigned core, unsigned aicpu) __attribute__((noreturn));
// An interrupt it took (called from irq_handler, which acknowledged `line`): its mailbox's is
// ended by aicpu_main once the task is done (the line stays high until then), any other here.
void aicpu_irq(unsigned aicpu, uint32_t line);
