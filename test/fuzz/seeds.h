/* The fuzz corpus seed writer (make_seeds.c, record_seeds.c). */
#ifndef SF_FUZZ_SEEDS_H
#define SF_FUZZ_SEEDS_H

#include <stddef.h>
#include <stdint.h>

/* Write @len bytes at @p as @dir/@name; 0 or -1 (reported). */
int write_seed(const char *dir, const char *name, const uint8_t *p, size_t len);

/* @name lowercased into @out ("ListOffsets" -> "listoffsets"). */
void seed_name_lower(const char *name, char *out, size_t size);

/* The generated seeds of test/fuzz/corpus-records and test/fuzz/corpus-client; each returns
 * the number written or -1. */
int record_seeds(const char *dir);
int client_seeds(const char *dir);

#endif
