/* SPDX-License-Identifier: MIT */
/* vecacc's registers (byte offsets), shared by its TLM model (vecacc.cpp), its driver
 * (firmware/bsp/vecacc.h) and, by hand, its Verilog (vecacc.v, whose header lists them). */
#ifndef VECACC_REGS_H
#define VECACC_REGS_H

#define VECACC_CTRL 0x00   /* bit 0: start (ignored while busy), bit 1: interrupt enable */
#define VECACC_STATUS 0x04 /* bit 0: busy, bit 1: done (write 1 to clear), bit 2: error */
#define VECACC_SRC_A_LO 0x08
#define VECACC_SRC_A_HI 0x0c
#define VECACC_SRC_B_LO 0x10
#define VECACC_SRC_B_HI 0x14
#define VECACC_DST_LO 0x18
#define VECACC_DST_HI 0x1c
#define VECACC_COUNT 0x20 /* int32 elements */
#define VECACC_OP 0x24    /* 0: dst = a + b, 1: dst = a * SCALE (wrapping) */
#define VECACC_SCALE 0x28
#define VECACC_CYCLES 0x2c /* clock cycles the last operation took */
#define VECACC_ID 0x30     /* VECACC_ID_VALUE */
#define VECACC_SIZE 0x100

#define VECACC_ID_VALUE 0x7ecacc01u
#define VECACC_START 1u
#define VECACC_IRQ_ENABLE 2u
#define VECACC_BUSY 1u
#define VECACC_DONE 2u
#define VECACC_ERROR 4u

#endif
