// SPDX-License-Identifier: MIT
// AI CPU side of the runtime: each AI CPU core waits for its mailbox interrupt from the task
// scheduler, runs the kernel named there on tensors in DRAM, and writes its status back.
// Kernels: top-k and argmax over rows of f32 (integer comparisons on the bit patterns: the
// firmware uses no floating-point registers; ties go to the lower index), concat (byte copies:
// the joins of tensors the AI Core's 32-byte moves cannot make), gather (rows picked by index:
// an embedding's lookup, a class token's row; CANN runs its GatherV2 on the AI CPU too), expand
// (a tensor broadcast by numpy's rules, as CANN's BroadcastTo: rows repeated at any byte offset)
// and slice (runs of a tensor at any byte offset and stride, backward too: ONNX's Slice and Split).
#include "aicpu.h"

// Maps an f32 bit pattern to an unsigned key with the same order (NaNs aside).
static uint32_t order_key(uint32_t bits) { return bits & 0x80000000u ? ~bits : bits | 0x80000000u; }

static int topk(const uint64_t* a) {
  const uint32_t* x = (const uint32_t*)a[0];
  const uint64_t rows = a[1], cols = a[2], k = a[3];
  uint32_t* values = (uint32_t*)a[4];
  int32_t* indices = (int32_t*)a[5];
  if (k == 0 || k > cols || k > 64) return DVP_AICPU_BAD_ARGS;
  for (uint64_t r = 0; r < rows; ++r) {
    const uint32_t* row = x + r * cols;
    int32_t best[64];
    uint64_t have = 0;
    // Insertion into a sorted list of at most k: descending value, then ascending index.
    for (uint64_t j = 0; j < cols; ++j) {
      const uint32_t key = order_key(row[j]);
      uint64_t pos = have;
      while (pos > 0 && order_key(row[best[pos - 1]]) < key) --pos;
      if (pos >= k) continue;
      for (uint64_t m = have < k ? have : k - 1; m > pos; --m) best[m] = best[m - 1];
      best[pos] = (int32_t)j;
      if (have < k) ++have;
    }
    for (uint64_t m = 0; m < k; ++m) {
      indices[r * k + m] = best[m];
      if (values) values[r * k + m] = row[best[m]];
    }
  }
  return DVP_AICPU_OK;
}

static int argmax(const uint64_t* a) {
  const uint32_t* x = (const uint32_t*)a[0];
  const uint64_t rows = a[1], cols = a[2];
  int32_t* indices = (int32_t*)a[5];
  if (cols == 0) return DVP_AICPU_BAD_ARGS;
  for (uint64_t r = 0; r < rows; ++r) {
    uint64_t best = 0;
    for (uint64_t j = 1; j < cols; ++j)
      if (order_key(x[r * cols + j]) > order_key(x[r * cols + best])) best = j;
    indices[r] = (int32_t)best;
  }
  return DVP_AICPU_OK;
}

// n bytes: 8 at a time while both sides are 8-byte aligned, then the rest byte by byte.
static void copy_bytes(uint8_t* d, const uint8_t* s, uint64_t n) {
  if ((((uintptr_t)d | (uintptr_t)s) & 7) == 0)
    for (; n >= 8; n -= 8, d += 8, s += 8) *(uint64_t*)d = *(const uint64_t*)s;
  while (n--) *d++ = *s++;
}

static int concat(const uint64_t* a) {
  uint8_t* y = (uint8_t*)a[0];
  const uint64_t outer = a[1], n = a[2];
  if (n == 0) return DVP_AICPU_BAD_ARGS;
  for (uint64_t o = 0; o < outer; ++o)
    for (uint64_t j = 0; j < n; ++j) {
      const uint64_t bytes = a[4 + 2 * j];
      copy_bytes(y, (const uint8_t*)a[3 + 2 * j] + o * bytes, bytes);
      y += bytes;
    }
  return DVP_AICPU_OK;
}

// y's row (o, i) is x's row (o, indices[i]) of outer blocks of x_rows rows; a negative index counts
// from the end, as ONNX's does. An index outside [-x_rows, x_rows): nothing written.
static int gather(const uint64_t* a) {
  uint8_t* y = (uint8_t*)a[0];
  const uint64_t outer = a[1], n = a[2], row_bytes = a[3], x_rows = a[5];
  const uint8_t* x = (const uint8_t*)a[4];
  const int32_t* indices = (const int32_t*)a[6];
  for (uint64_t i = 0; i < n; ++i)
    if (indices[i] < -(int64_t)x_rows || indices[i] >= (int64_t)x_rows) return DVP_AICPU_BAD_INDEX;
  for (uint64_t o = 0; o < outer; ++o)
    for (uint64_t i = 0; i < n; ++i) {
      // Read once and checked again: y may overlap the indices (an alias), and a row copied
      // there must not send a later read outside x.
      const int64_t at = indices[i];
      if (at < -(int64_t)x_rows || at >= (int64_t)x_rows) return DVP_AICPU_BAD_INDEX;
      copy_bytes(y, x + (o * x_rows + (uint64_t)(at < 0 ? at + (int64_t)x_rows : at)) * row_bytes, row_bytes);
      y += row_bytes;
    }
  return DVP_AICPU_OK;
}

// y's rows (o, r) of run bytes, r < mid, are x's row o: x's row copied once, then what is written
// so far copied after itself, doubling (a run of one element fills a row of mid in log2(mid) copies).
static int expand(const uint64_t* a) {
  uint8_t* y = (uint8_t*)a[0];
  const uint8_t* x = (const uint8_t*)a[1];
  const uint64_t outer = a[2], mid = a[3], run = a[4];
  if (run == 0) return DVP_AICPU_BAD_ARGS;
  for (uint64_t o = 0; o < outer && mid; ++o, y += mid * run) {
    copy_bytes(y, x + o * run, run);
    for (uint64_t done = run, bytes = mid * run; done < bytes;) {
      const uint64_t n = done < bytes - done ? done : bytes - done;
      copy_bytes(y + done, y, n);
      done += n;
    }
  }
  return DVP_AICPU_OK;
}

// y's runs (o, r) of run bytes are x's from start + o outer_stride + r row_stride, r < rows: a slice
// of x along one axis (numpy's x[..., a:b:step, ...]); row_stride is signed, a step backward.
static int slice(const uint64_t* a) {
  uint8_t* y = (uint8_t*)a[0];
  const uint8_t* x = (const uint8_t*)a[1] + a[7];
  const uint64_t outer = a[2], outer_stride = a[3], rows = a[4], run = a[6];
  const int64_t row_stride = (int64_t)a[5];
  if (run == 0) return DVP_AICPU_BAD_ARGS;
  for (uint64_t o = 0; o < outer; ++o)
    for (uint64_t r = 0; r < rows; ++r, y += run) copy_bytes(y, x + o * outer_stride + (int64_t)r * row_stride, run);
  return DVP_AICPU_OK;
}

static volatile int mail;  // set by the interrupt handler, taken by the loop below

// The mailbox's line stays high until the task's DONE is written. Ended now, it would be taken
// again at once, before the loop below can mask interrupts: a storm that starves the loop (how
// long depends on when the CPU model looks at its IRQ input). So the loop ends it after DONE.
void aicpu_irq(unsigned aicpu, uint32_t line) {
  if (line == SOC_AICPU_IRQ(aicpu))
    mail = 1;
  else
    reg_write(SOC_IRQ_BASE + IRQ_EOI(core_id()), line);
}

void aicpu_main(unsigned core, unsigned aicpu) {
  reg_write(SOC_IRQ_BASE + IRQ_ROUTE(SOC_AICPU_IRQ(aicpu)), core);
  reg_write(SOC_IRQ_BASE + IRQ_ENABLE, reg_read(SOC_IRQ_BASE + IRQ_ENABLE) | 1u << SOC_AICPU_IRQ(aicpu));
  printf("aicpu%u: ready on core %u\n", aicpu, core);
  for (;;) {
    wfi_until(mail);  // the function runs with interrupts masked
    mail = 0;
    const uint32_t func = reg_read(SOC_TS_BASE + TS_AICPU_FUNC(aicpu));
    const uint64_t args = (uint64_t)reg_read(SOC_TS_BASE + TS_AICPU_ARGS_HI(aicpu)) << 32 |
                          reg_read(SOC_TS_BASE + TS_AICPU_ARGS_LO(aicpu));
    printf("aicpu%u: function %u, arguments at %lx\n", aicpu, func, (unsigned long)args);
    int status = DVP_AICPU_NO_FUNCTION;
    if (func == DVP_AICPU_TOPK) status = topk((const uint64_t*)args);
    if (func == DVP_AICPU_ARGMAX) status = argmax((const uint64_t*)args);
    if (func == DVP_AICPU_CONCAT) status = concat((const uint64_t*)args);
    if (func == DVP_AICPU_GATHER) status = gather((const uint64_t*)args);
    if (func == DVP_AICPU_EXPAND) status = expand((const uint64_t*)args);
    if (func == DVP_AICPU_SLICE) status = slice((const uint64_t*)args);
    reg_write(SOC_TS_BASE + TS_AICPU_DONE(aicpu), (uint32_t)status);  // lowers the line
    reg_write(SOC_IRQ_BASE + IRQ_EOI(core), SOC_AICPU_IRQ(aicpu));
  }
}
