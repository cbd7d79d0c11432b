// SPDX-License-Identifier: MIT
// The heap: malloc, free, calloc and realloc over the memory between .bss and the stacks
// (link.ld: __heap_start, __heap_end). Blocks tile the heap, each a 16-byte header then its
// payload (16-byte aligned); a free block merges with the free blocks after it when malloc
// walks past it or it is freed. First fit. Every core may call it, also from an interrupt
// handler: it masks this core's IRQs and takes a lock between cores that needs no atomic
// instructions (Lamport's bakery: each core a Unicorn instance, whose exclusive monitors the
// others do not see).
#include <stddef.h>

#include "bsp.h"

extern char __heap_start[], __heap_end[];

#define HEAP_CORES 16           // the platform's most cores (link.ld: __dvp_cores)
#define BLOCK_USED 0x55534544u  // "USED": a header free() accepts
#define BLOCK_FREE 0x46524545u  // "FREE"

struct block {
  size_t size;     // bytes, header included; a multiple of 16
  uint32_t state;  // BLOCK_USED or BLOCK_FREE
  uint32_t pad;
};

static int heap_ready;
static volatile uint32_t choosing[HEAP_CORES], ticket[HEAP_CORES];

static void fence(void) { __asm__ volatile("dmb ish" ::: "memory"); }

static void lock(unsigned me) {
  choosing[me] = 1;
  fence();
  uint32_t highest = 0;
  for (unsigned i = 0; i < HEAP_CORES; ++i)
    if (ticket[i] > highest) highest = ticket[i];
  ticket[me] = highest + 1;
  fence();
  choosing[me] = 0;
  fence();
  for (unsigned i = 0; i < HEAP_CORES; ++i) {
    while (choosing[i]) {}
    // Lower tickets first; equal tickets by core number.
    while (ticket[i] && (ticket[i] < ticket[me] || (ticket[i] == ticket[me] && i < me))) {}
  }
  fence();
}

static void unlock(unsigned me) {
  fence();
  ticket[me] = 0;
}

// Enters the heap: IRQs masked on this core (an interrupt handler may allocate), the lock
// held. Returns the DAIF bits to restore.
static uint64_t enter(void) {
  uint64_t daif;
  __asm__ volatile("mrs %0, daif\n\tmsr daifset, #2" : "=r"(daif)::"memory");
  lock(core_id());
  if (!heap_ready) {
    // One free block over the whole heap; none when it cannot hold a header and 16 bytes.
    const size_t bytes = (size_t)(__heap_end - __heap_start) & ~(size_t)15;
    if (bytes >= 2 * sizeof(struct block)) {
      struct block* b = (struct block*)__heap_start;
      b->size = bytes;
      b->state = BLOCK_FREE;
    }
    heap_ready = 1;
  }
  return daif;
}

static void leave(uint64_t daif) {
  unlock(core_id());
  __asm__ volatile("msr daif, %0" ::"r"(daif) : "memory");
}

static struct block* next_block(struct block* b) { return (struct block*)((char*)b + b->size); }

// Whether a block header at p lies within the heap (blocks are at least 32 bytes).
static int in_heap(const void* p) { return (const char*)p + 2 * sizeof(struct block) <= __heap_end; }

// Merges the free blocks that follow b into b.
static void absorb_free(struct block* b) {
  for (struct block* n = next_block(b); in_heap(n) && n->state == BLOCK_FREE; n = next_block(b)) b->size += n->size;
}

// Cuts b down to `need` bytes when the rest can hold a block of its own.
static void split(struct block* b, size_t need) {
  if (b->size - need < 2 * sizeof(struct block)) return;
  struct block* rest = (struct block*)((char*)b + need);
  rest->size = b->size - need;
  rest->state = BLOCK_FREE;
  b->size = need;
}

// Bytes a block needs for an n-byte payload; 0 when that cannot be had.
static size_t block_bytes(size_t n) {
  if (n > (size_t)(__heap_end - __heap_start)) return 0;
  return sizeof(struct block) + ((n + 15) & ~(size_t)15);
}

static void* alloc_locked(size_t n) {
  const size_t need = block_bytes(n ? n : 1);
  if (!need) return NULL;
  for (struct block* b = (struct block*)__heap_start; in_heap(b); b = next_block(b)) {
    if (b->state != BLOCK_FREE) continue;
    absorb_free(b);
    if (b->size < need) continue;
    split(b, need);
    b->state = BLOCK_USED;
    return b + 1;
  }
  return NULL;
}

// The header of a payload malloc returned; a pointer that is not one ends the run (exit
// 0xf0): freeing it would corrupt the heap.
static struct block* header_of(const char* what, void* p) {
  struct block* b = (struct block*)p - 1;
  if ((char*)b < __heap_start || !in_heap(b) || ((uintptr_t)p & 15) || b->state != BLOCK_USED) {
    printf("%s(%p): not a block malloc returned, or freed already\n", what, p);
    soc_exit(0xf0);
  }
  return b;
}

void* malloc(size_t n) {
  const uint64_t daif = enter();
  void* p = alloc_locked(n);
  leave(daif);
  return p;
}

void free(void* p) {
  if (!p) return;
  const uint64_t daif = enter();
  struct block* b = header_of("free", p);
  b->state = BLOCK_FREE;
  absorb_free(b);
  leave(daif);
}

void* calloc(size_t count, size_t size) {
  if (size && count > (size_t)-1 / size) return NULL;
  void* p = malloc(count * size);
  if (p) memset(p, 0, count * size);
  return p;
}

// In place when the block, with the free blocks after it, is large enough; else a new block,
// the payload copied. NULL (the old block kept) when the heap has no room.
void* realloc(void* p, size_t n) {
  if (!p) return malloc(n);
  if (!n) {
    free(p);
    return NULL;
  }
  const uint64_t daif = enter();
  struct block* b = header_of("realloc", p);
  const size_t need = block_bytes(n);
  void* out = NULL;
  if (need) {
    absorb_free(b);
    if (b->size >= need) {
      split(b, need);
      out = p;
    } else if ((out = alloc_locked(n))) {
      memcpy(out, p, b->size - sizeof(struct block));
      b->state = BLOCK_FREE;
      absorb_free(b);
    }
  }
  leave(daif);
  return out;
}

size_t heap_free_bytes(void) {
  const uint64_t daif = enter();
  size_t bytes = 0;
  for (struct block* b = (struct block*)__heap_start; in_heap(b); b = next_block(b))
    if (b->state == BLOCK_FREE) {
      absorb_free(b);
      bytes += b->size - sizeof(struct block);
    }
  leave(daif);
  return bytes;
}
