// SPDX-License-Identifier: MIT
// The AI CPU side of the runtime firmware.
#pragma once
#include "bsp.h"
#include "dvp_abi.h"

// Runs on AI CPU `aicpu` (core number `core`) forever: tasks from the scheduler's mailbox.
void aicpu_main(unsigned core, unsigned aicpu) __attribute__((noreturn));
// Its mailbox interrupt (called from irq_handler, which acknowledges and ends it).
void aicpu_irq(unsigned aicpu);
