/* Arena allocator: many small allocations freed together (one per decoded request). */
#ifndef SF_ARENA_H
#define SF_ARENA_H

#include <stddef.h>

typedef struct sf_arena_block sf_arena_block_t;

typedef struct sf_arena {
    sf_arena_block_t *head; /* newest block, owns the chain */
    size_t total;           /* bytes handed out, for caps */
    size_t limit;           /* 0 = unlimited; sf_arena_alloc fails past it */
} sf_arena_t;

/* Initialise an empty arena; @limit caps the bytes it may hand out (0 = no cap). */
void sf_arena_init(sf_arena_t *arena, size_t limit);

/* Zeroed, 16-byte aligned memory owned by the arena, or NULL on failure or past the limit. */
void *sf_arena_alloc(sf_arena_t *arena, size_t size);

/* Allocate @n elements of @size with overflow check; zeroed; NULL on failure. */
void *sf_arena_calloc(sf_arena_t *arena, size_t n, size_t size);

/* Free every block; the arena may be reused after (it is empty again). */
void sf_arena_reset(sf_arena_t *arena);

#endif
