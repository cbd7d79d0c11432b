# SPDX-License-Identifier: MIT
# C (M x 64, f32) = A (M x 64, f16) x B (64 x 64, f16); block b computes rows 64b..64b+63.
# Arguments (argbase): A, B, C (GM addresses). M = 64 x blockdim.
# GM (ND) -> L1 (Nz) on MTE2, L1 -> L0A / L0B on MTE1, the cube (M), L0C -> GM on FixPipe;
# each stage waits for the one before it with a flag. The kernel library's GEMM tiles large
# matrices and double-buffers; this is one tile, to show the path.
    mfspr x1, argbase
    ld.d  x2, 0(x1)              # A
    ld.d  x3, 8(x1)              # B
    ld.d  x4, 16(x1)             # C
    mfspr x5, blockid
    shli  x6, x5, 13             # 64 rows x 64 x 2 B = 8 KiB of A per block
    add   x2, x2, x6
    shli  x6, x5, 14             # 64 rows x 64 x 4 B = 16 KiB of C per block
    add   x4, x4, x6
    li64  x7, 0x0040004000400040 # Nd2NzCfg: rows 64, cols 64, src_stride 64, dst_rows 64
    li    x8, 0                  # L1: A in Nz at 0
    li    x9, 8192               # L1: B in Nz at 8 KiB
    nd2nz.gm2l1.f16 x8, x2, x7, x0
    nd2nz.gm2l1.f16 x9, x3, x7, x0
    setflag  mte2, mte1, 0
    waitflag mte2, mte1, 0
    # A: one load per row of fractals (4 fractals of k, 4 apart in Nz) into zZ order.
    li    x10, 0x0404            # Load2dCfg: repeat 4, src_stride 4
    li    x11, 0                 # L0A destination
    li    x12, 0                 # L1 source
    li    x13, 4
arow:
    load2d.l0a.f16 x11, x12, x10
    addi  x11, x11, 2048
    addi  x12, x12, 512
    addi  x13, x13, -1
    bne   x13, zero, arow
    # B: Nz fractal order is already B^T's zN order; transpose each fractal.
    li    x14, 0x0110            # Load2dCfg: repeat 16, src_stride 1
    li    x15, 0
    load2d.l0b.f16.t x15, x9, x14
    setflag  mte1, m, 0
    waitflag mte1, m, 0
    li64  x16, 0x1040040040      # MmadCfg: m 64, k 64, n 64, init
    mmad.f32.f16 x15, x15, x15, x16
    setflag  m, fix, 0
    waitflag m, fix, 0
    li64  x17, 0x0000004000400040  # FixpCfg: m 64, n 64, dst_stride 64
    fixp.l0c2gm.f32.f32 x4, x15, x17, x0
    end
