// SPDX-License-Identifier: MIT
// The BSP's heap, on two cores at once. Built with STACK_SIZE 8K, CORES 2 and MEMORY_SIZE 1 MiB
// (firmware/CMakeLists.txt): the heap must span exactly from .bss to the two stacks below the
// 1 MiB top, and the stack pointer lie in this core's stack. Then: alignment, calloc's zeros,
// realloc keeping the contents, NULL when out of memory (and on size overflow), every free
// block merged again once all is freed, and a random mix of malloc / realloc / free on both
// cores, each block's contents checked before it is freed. Core 0 exits 0 when all hold.
#include "bsp.h"

extern char __heap_start[], __heap_end[], __stack_top[];

#define STACK 8192
#define MEMORY 0x100000
#define SLOTS 48

static volatile int go, done1;
static volatile int failed;

static int fail(int code, const char* what) {
  printf("heap FAILED on core %u: %s\n", core_id(), what);
  failed = code;
  return code;
}

static uint32_t lcg(uint32_t* s) { return *s = *s * 1664525u + 1013904223u; }

// Fills a block with a pattern of its own: its slot and size in every byte position.
static void fill(unsigned char* p, size_t n, unsigned tag) {
  for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)(tag * 31 + i);
}

static int intact(const unsigned char* p, size_t n, unsigned tag) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != (unsigned char)(tag * 31 + i)) return 0;
  return 1;
}

// 3000 random operations on this core's slots; every block checked before realloc or free.
static int churn(uint32_t seed) {
  unsigned char* slot[SLOTS] = {0};
  size_t size[SLOTS] = {0};
  for (int op = 0; op < 3000; ++op) {
    const unsigned i = lcg(&seed) % SLOTS;
    const size_t n = 1 + lcg(&seed) % 2048;
    if (slot[i] && !intact(slot[i], size[i], i)) return fail(20, "a block's contents changed");
    if (slot[i] && (lcg(&seed) & 1)) {
      unsigned char* p = realloc(slot[i], n);
      if (!p) return fail(21, "realloc failed with room left");
      if (!intact(p, n < size[i] ? n : size[i], i)) return fail(22, "realloc lost the contents");
      slot[i] = p;
    } else {
      free(slot[i]);
      slot[i] = malloc(n);
      if (!slot[i]) return fail(23, "malloc failed with room left");
    }
    if ((uintptr_t)slot[i] & 15) return fail(24, "a block not 16-byte aligned");
    size[i] = n;
    fill(slot[i], n, i);
  }
  for (unsigned i = 0; i < SLOTS; ++i) {
    if (slot[i] && !intact(slot[i], size[i], i)) return fail(25, "a block's contents changed");
    free(slot[i]);
  }
  return 0;
}

static int layout(void) {
  uint64_t sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  printf("heap %p .. %p (%lu bytes), stack top %p, sp %lx\n", (void*)__heap_start, (void*)__heap_end,
         (unsigned long)(__heap_end - __heap_start), (void*)__stack_top, (unsigned long)sp);
  const uintptr_t top = (uintptr_t)__stack_top;  // addresses: the symbols are not C objects
  if (top != 0x80000000u + MEMORY) return fail(1, "the stacks do not end at MEMORY_SIZE");
  if ((uintptr_t)__heap_end != top - 2 * STACK) return fail(2, "the heap does not end below two 8 KiB stacks");
  if (sp > top || sp < top - STACK) return fail(3, "sp not in core 0's stack");
  return 0;
}

static int basics(size_t all) {
  char* a = malloc(100);
  char* b = malloc(200);
  if (!a || !b || ((uintptr_t)a & 15) || ((uintptr_t)b & 15)) return fail(4, "malloc: NULL or misaligned");
  if (b < a + 100 && a < b + 200) return fail(5, "two blocks overlap");
  memset(a, 0xff, 100);
  free(a);
  unsigned* z = calloc(25, 4);
  for (int i = 0; i < 25; ++i)
    if (!z || z[i]) return fail(6, "calloc did not zero");
  fill((unsigned char*)z, 100, 7);
  unsigned char* g = realloc(z, 5000);
  if (!g || !intact(g, 100, 7)) return fail(7, "realloc did not keep the contents");
  if (realloc(g, 0) != NULL) return fail(8, "realloc(p, 0) did not free");
  free(b);
  if (heap_free_bytes() != all) return fail(9, "free blocks not merged again");
  if (malloc(all + 1) || malloc((size_t)-1) || calloc((size_t)1 << 33, (size_t)1 << 31))
    return fail(10, "no NULL out of memory");
  void* whole = malloc(all);  // the whole heap, in one block: every free block merged
  if (!whole) return fail(11, "the whole heap is not one block");
  if (malloc(1)) return fail(12, "malloc from a full heap");
  free(whole);
  return 0;
}

int main(unsigned core) {
  if (core == 1) {
    while (!go) {}
    churn(1234);
    done1 = 1;
    for (;;) wfi();  // core 0 ends the run
  }
  const size_t all = heap_free_bytes();
  printf("heap test: %lu bytes free\n", (unsigned long)all);
  if (all != (size_t)(__heap_end - __heap_start) - 16) return fail(13, "the heap is not one free block at start");
  if (layout() || basics(all)) return failed;
  go = 1;
  if (churn(99)) return failed;
  while (!done1) {}
  if (failed) return failed;
  if (heap_free_bytes() != all) return fail(14, "free blocks not merged after both cores freed all");
  printf("heap passed\n");
  return 0;
}
