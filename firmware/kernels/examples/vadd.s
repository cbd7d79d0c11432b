# SPDX-License-Identifier: MIT
# z = x + y on f16 vectors, split over the kernel's blocks by block id.
# Arguments (argbase): x, y, z (GM addresses), n (elements; a multiple of TILE x blockdim).
# Each tile goes GM -> UB (MTE2), is added (V), and goes back UB -> GM (MTE3); flags order
# the three pipes. Single-buffered: the kernel library's version double-buffers.
.equ TILE_BYTES, 16384          # 8192 f16 elements
.equ TILE_SHIFT, 13             # log2(8192)

    mfspr x1, argbase
    ld.d  x2, 0(x1)             # x
    ld.d  x3, 8(x1)             # y
    ld.d  x4, 16(x1)            # z
    ld.d  x5, 24(x1)            # n
    mfspr x6, blockid
    mfspr x7, blockdim
    divu  x8, x5, x7            # elements per block
    mul   x9, x8, x6
    shli  x9, x9, 1             # this block's first byte
    add   x2, x2, x9
    add   x3, x3, x9
    add   x4, x4, x9
    shri  x10, x8, TILE_SHIFT   # tiles in this block
    li    x11, 0x200001         # DataCopyCfg: 1 block of 512 x 32 B
    li64  x12, 0x0008080801010140   # VecCfg: 64 repeats, block strides 1, repeat strides 8
    li    x13, 128
    setmaskn x13                # all 128 f16 elements of a repeat
    li    x20, 0                # UB: x tile
    li    x21, 16384            # UB: y tile
    li    x22, 32768            # UB: z tile
    beq   x10, zero, done
tile:
    copy.gm2ub x20, x2, x11
    copy.gm2ub x21, x3, x11
    setflag  mte2, v, 0
    waitflag mte2, v, 0
    vadd.f16 x22, x20, x21, x12
    setflag  v, mte3, 0
    waitflag v, mte3, 0
    copy.ub2gm x4, x22, x11
    setflag  mte3, mte2, 0      # the next tile's loads overwrite UB only after this store read it
    waitflag mte3, mte2, 0
    addi  x2, x2, TILE_BYTES
    addi  x3, x3, TILE_BYTES
    addi  x4, x4, TILE_BYTES
    addi  x10, x10, -1
    bne   x10, zero, tile
done:
    end
