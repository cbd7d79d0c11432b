// SPDX-License-Identifier: MIT
// Start code: FP/SIMD access, per-core stack, exception vectors, .bss cleared by core 0, then
// main(core). The model starts a core at EL1h with the MMU off and x0 = its core number.
// Stacks are __dvp_stack_size bytes each below __stack_top, by core number, for __dvp_cores
// cores (link.ld); a core beyond them prints why on its UART and ends the run (exit 0xf1).
    .section .text.start, "ax"
    .global _start
_start:
    mov     x19, x0
    msr     tpidr_el1, x0           // the core number, per core (bsp.c: core_id)
    // CPACR_EL1.FPEN = 0b11: FP/SIMD instructions at EL1 do not trap. The compiler may use
    // them for copies even in integer code, and printf's %f needs them.
    mrs     x1, cpacr_el1
    orr     x1, x1, #(3 << 20)
    msr     cpacr_el1, x1
    ldr     x1, =__dvp_cores
    cmp     x19, x1
    b.hs    no_stack
    ldr     x1, =__stack_top
    ldr     x2, =__dvp_stack_size
    mul     x2, x2, x19
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

// No stack for this core: no C either. The message goes out byte by byte on its UART, then the
// run ends with exit code 0xf1.
no_stack:
    ldr     x1, =bsp_uart0_data
    ldr     x1, [x1]
    add     x1, x1, x19, lsl #8     // UART n is 0x100 bytes after UART n-1 (soc_regs.h)
    ldr     x2, =no_stack_message
4:  ldrb    w3, [x2], #1
    cbz     w3, 5f
    str     w3, [x1]
    b       4b
5:  ldr     x1, =bsp_simctrl_exit
    ldr     x1, [x1]
    mov     w2, #0xf1
    str     w2, [x1]
    b       3b
    .section .rodata.start, "a"
no_stack_message:
    .asciz  "start: no stack for this core: the firmware was linked for fewer cores (__dvp_cores)\n"
    .text

// Save the registers a C function may change, call `handler`, restore, return. With FP/SIMD in
// use (a firmware built without -mgeneral-regs-only) the handler may change every V register's
// upper half and FPCR/FPSR too, so those are saved as well.
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
#ifdef __ARM_FP
    bl      fp_save_call_\handler
#else
    bl      \handler
#endif
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

#ifdef __ARM_FP
// FPCR, FPSR and q0-q31 around the handler (x30 was saved by the vector).
fp_save_call_irq_handler:
    sub     sp, sp, #528
    stp     q0, q1, [sp, #16]
    stp     q2, q3, [sp, #48]
    stp     q4, q5, [sp, #80]
    stp     q6, q7, [sp, #112]
    stp     q8, q9, [sp, #144]
    stp     q10, q11, [sp, #176]
    stp     q12, q13, [sp, #208]
    stp     q14, q15, [sp, #240]
    stp     q16, q17, [sp, #272]
    stp     q18, q19, [sp, #304]
    stp     q20, q21, [sp, #336]
    stp     q22, q23, [sp, #368]
    stp     q24, q25, [sp, #400]
    stp     q26, q27, [sp, #432]
    stp     q28, q29, [sp, #464]
    stp     q30, q31, [sp, #496]
    mrs     x0, fpcr
    mrs     x1, fpsr
    stp     x0, x1, [sp, #0]
    str     x30, [sp, #-16]!
    bl      irq_handler
    ldr     x30, [sp], #16
    ldp     x0, x1, [sp, #0]
    msr     fpcr, x0
    msr     fpsr, x1
    ldp     q0, q1, [sp, #16]
    ldp     q2, q3, [sp, #48]
    ldp     q4, q5, [sp, #80]
    ldp     q6, q7, [sp, #112]
    ldp     q8, q9, [sp, #144]
    ldp     q10, q11, [sp, #176]
    ldp     q12, q13, [sp, #208]
    ldp     q14, q15, [sp, #240]
    ldp     q16, q17, [sp, #272]
    ldp     q18, q19, [sp, #304]
    ldp     q20, q21, [sp, #336]
    ldp     q22, q23, [sp, #368]
    ldp     q24, q25, [sp, #400]
    ldp     q26, q27, [sp, #432]
    ldp     q28, q29, [sp, #464]
    ldp     q30, q31, [sp, #496]
    add     sp, sp, #528
    ret
#endif
