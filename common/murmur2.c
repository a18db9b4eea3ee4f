#include "murmur2.h"

#include "err.h"

#define SF_MURMUR2_SEED 0x9747b28cU
#define SF_MURMUR2_M 0x5bd1e995U
#define SF_MURMUR2_R 24

uint32_t sf_murmur2(const void *key, size_t len) {
    const uint8_t *p = key;
    /* Java mixes in the int length; a longer input wraps the same way it would there. */
    uint32_t h = SF_MURMUR2_SEED ^ (uint32_t)len;
    size_t i, tail = len & ~(size_t)3;

    for (i = 0; i < tail; i += 4) {
        /* four bytes, little-endian */
        uint32_t k = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 |
                     (uint32_t)p[i + 3] << 24;
        k *= SF_MURMUR2_M;
        k ^= k >> SF_MURMUR2_R;
        k *= SF_MURMUR2_M;
        h *= SF_MURMUR2_M;
        h ^= k;
    }
    switch (len & 3) {
    case 3:
        h ^= (uint32_t)p[tail + 2] << 16;
        /* fall through */
    case 2:
        h ^= (uint32_t)p[tail + 1] << 8;
        /* fall through */
    case 1:
        h ^= p[tail];
        h *= SF_MURMUR2_M;
    }
    h ^= h >> 13;
    h *= SF_MURMUR2_M;
    h ^= h >> 15;
    return h;
}

int32_t sf_murmur2_partition(const void *key, size_t len, int32_t npartitions) {
    if (npartitions < 1)
        return SF_ERR_INVALID;
    return (int32_t)((sf_murmur2(key, len) & 0x7fffffffU) % (uint32_t)npartitions);
}
