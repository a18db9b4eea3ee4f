/* CRC32C (Castagnoli), as used by Kafka record batches v2. */
#ifndef SF_CRC32C_H
#define SF_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Extend @crc (0 to start) over @len bytes at @p. Uses SSE4.2 when the CPU has it. */
uint32_t sf_crc32c(uint32_t crc, const void *p, size_t len);

#endif
