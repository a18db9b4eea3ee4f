#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SF_ARENA_BLOCK 4096

struct sf_arena_block {
    sf_arena_block_t *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void sf_arena_init(sf_arena_t *arena, size_t limit) {
    arena->head = NULL;
    arena->total = 0;
    arena->limit = limit;
}

void *sf_arena_alloc(sf_arena_t *arena, size_t size) {
    size_t need = (size + 15) & ~(size_t)15;
    sf_arena_block_t *blk = arena->head;
    void *p;

    if (need < size)
        return NULL;
    if (arena->limit && (need > arena->limit || arena->total > arena->limit - need))
        return NULL;
    if (!blk || blk->cap - blk->used < need) {
        size_t cap = need > SF_ARENA_BLOCK ? need : SF_ARENA_BLOCK;
        blk = malloc(sizeof(*blk) + cap);
        if (!blk)
            return NULL;
        blk->used = 0;
        blk->cap = cap;
        blk->next = arena->head;
        arena->head = blk;
    }
    p = blk->data + blk->used;
    blk->used += need;
    arena->total += need;
    memset(p, 0, size);
    return p;
}

void *sf_arena_calloc(sf_arena_t *arena, size_t n, size_t size) {
    if (size && n > SIZE_MAX / size)
        return NULL;
    return sf_arena_alloc(arena, n * size);
}

void sf_arena_reset(sf_arena_t *arena) {
    sf_arena_block_t *blk = arena->head, *next;
    for (; blk; blk = next) {
        next = blk->next;
        free(blk);
    }
    arena->head = NULL;
    arena->total = 0;
}
