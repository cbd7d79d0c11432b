# UB addresses must be 32-byte aligned: the copy below stops the core.
    li x1, 16
    mfspr x2, argbase
    li x3, 0x1001
    copy.gm2ub x1, x2, x3
    end
