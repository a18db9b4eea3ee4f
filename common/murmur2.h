/* MurmurHash2 as the Kafka Java client computes it (org.apache.kafka.common.utils.Utils
 * .murmur2), and the default partitioner's key-to-partition mapping built on it. */
#ifndef SF_MURMUR2_H
#define SF_MURMUR2_H

#include <stddef.h>
#include <stdint.h>

/* The 32-bit MurmurHash2 of @len bytes at @key (borrowed; may be NULL when @len is 0), with
 * Kafka's seed 0x9747b28c. The value equals Java's signed int result reinterpreted as
 * unsigned. */
uint32_t sf_murmur2(const void *key, size_t len);

/* The partition the Java client's default partitioner picks for a non-null key:
 * (murmur2(key) & 0x7fffffff) % @npartitions (Utils.toPositive(Utils.murmur2(key)) %
 * numPartitions). @key is borrowed.
 * @return a partition in 0..npartitions-1, or SF_ERR_INVALID when @npartitions < 1. */
int32_t sf_murmur2_partition(const void *key, size_t len, int32_t npartitions);

#endif
