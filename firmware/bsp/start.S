// Start code: per-core stack, exception vectors, .bss cleared by core 0, then main(core).
// The model starts a core at EL1h with the MMU off and x0 = its core number.
    .section .text.start, "ax"
    .global _start
_start:
    mov     x19, x0
    msr     tpidr_el1, x0           // the core number, per core (bsp.c: core_id)
    ldr     x1, =__stack_top
    lsl     x2, x19, #14
    sub     sp, x1, x2
    ldr     x1, =vectors
    msr     vbar_el1, x1
    isb
    cbnz    x19, 2f
    ldr     x1, =__bss_start
    ldr     x2, =__bss_end
1:  cmp     x1, x2
    b.hs    2f
    str     xzr, [x1], #8
    b       1b
2:  mov     x0, x19
    bl      main
    bl      soc_exit
3:  wfi
    b       3b

// Save the registers a C function may change, call `handler`, restore, return.
    .macro  entry handler
    sub     sp, sp, #176
    stp     x0, x1, [sp, #0]
    stp     x2, x3, [sp, #16]
    stp     x4, x5, [sp, #32]
    stp     x6, x7, [sp, #48]
    stp     x8, x9, [sp, #64]
    stp     x10, x11, [sp, #80]
    stp     x12, x13, [sp, #96]
    stp     x14, x15, [sp, #112]
    stp     x16, x17, [sp, #128]
    stp     x18, x29, [sp, #144]
    str     x30, [sp, #160]
    bl      \handler
    ldp     x0, x1, [sp, #0]
    ldp     x2, x3, [sp, #16]
    ldp     x4, x5, [sp, #32]
    ldp     x6, x7, [sp, #48]
    ldp     x8, x9, [sp, #64]
    ldp     x10, x11, [sp, #80]
    ldp     x12, x13, [sp, #96]
    ldp     x14, x15, [sp, #112]
    ldp     x16, x17, [sp, #128]
    ldp     x18, x29, [sp, #144]
    ldr     x30, [sp, #160]
    add     sp, sp, #176
    eret
    .endm

// 16 vectors of 0x80 bytes; only "IRQ, current EL, SP_ELx" (0x280) is expected.
    .balign 2048
vectors:
    .set    n, 0
    .rept   16
    .balign 128
    .if n == 5
    entry   irq_handler
    .else
    mov     x0, #n
    b       unexpected_exception
    .endif
    .set    n, n + 1
    .endr
