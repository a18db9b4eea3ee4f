#include "crc32c.h"

#include <pthread.h>
#include <string.h>

#define POLY 0x82f63b78u /* reversed Castagnoli polynomial */

static uint32_t table[8][256];
static int have_sse42;

#if defined(__x86_64__)
/* The hardware path runs three independent CRC streams (the crc32 instruction has a latency of
 * three cycles but a throughput of one per cycle) over adjacent blocks, then shifts each
 * partial CRC over the following block's length with these tables and combines them. */
#define SF_CRC_LONG 8192
#define SF_CRC_SHORT 256
static uint32_t shift_long[4][256];
static uint32_t shift_short[4][256];

/* Multiply @vec by the 32x32 GF(2) matrix @mat. */
static uint32_t gf2_times(const uint32_t *mat, uint32_t vec) {
    uint32_t sum = 0;
    while (vec) {
        if (vec & 1)
            sum ^= *mat;
        vec >>= 1;
        mat++;
    }
    return sum;
}

static void gf2_square(uint32_t *square, const uint32_t *mat) {
    int n;
    for (n = 0; n < 32; n++)
        square[n] = gf2_times(mat, mat[n]);
}

/* The operator that extends a CRC over @len zero bytes, as tables for each byte of a CRC. */
static void zeros_table(uint32_t zeros[4][256], size_t len) {
    uint32_t op[32], even[32], odd[32], *a, *b, *t, row = 1;
    uint32_t n;
    int i;
    odd[0] = POLY; /* the operator for one zero bit */
    for (i = 1; i < 32; i++) {
        odd[i] = row;
        row <<= 1;
    }
    gf2_square(even, odd); /* two zero bits */
    gf2_square(odd, even); /* four zero bits */
    gf2_square(even, odd); /* eight zero bits: one zero byte */
    /* op = product of the operators for 2^k zero bytes over the bits k set in @len. */
    a = even;
    b = odd;
    for (i = 0; i < 32; i++)
        op[i] = 1u << i; /* identity */
    while (len) {
        if (len & 1) {
            uint32_t tmp[32];
            for (i = 0; i < 32; i++)
                tmp[i] = gf2_times(a, op[i]);
            memcpy(op, tmp, sizeof(op));
        }
        len >>= 1;
        if (!len)
            break;
        gf2_square(b, a);
        t = a;
        a = b;
        b = t;
    }
    for (n = 0; n < 256; n++) {
        zeros[0][n] = gf2_times(op, n);
        zeros[1][n] = gf2_times(op, n << 8);
        zeros[2][n] = gf2_times(op, n << 16);
        zeros[3][n] = gf2_times(op, n << 24);
    }
}

static uint32_t crc_shift(uint32_t zeros[4][256], uint32_t crc) {
    return zeros[0][crc & 0xff] ^ zeros[1][(crc >> 8) & 0xff] ^ zeros[2][(crc >> 16) & 0xff] ^
           zeros[3][crc >> 24];
}
#endif
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init(void) {
    uint32_t i, j, c;
    for (i = 0; i < 256; i++) {
        c = i;
        for (j = 0; j < 8; j++)
            c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
        table[0][i] = c;
    }
    for (i = 0; i < 256; i++)
        for (j = 1; j < 8; j++)
            table[j][i] = (table[j - 1][i] >> 8) ^ table[0][table[j - 1][i] & 0xff];
#if defined(__x86_64__)
    __builtin_cpu_init();
    have_sse42 = __builtin_cpu_supports("sse4.2");
    zeros_table(shift_long, SF_CRC_LONG);
    zeros_table(shift_short, SF_CRC_SHORT);
#endif
}

/* Slicing-by-8 table fallback. */
static uint32_t crc_table(uint32_t crc, const uint8_t *p, size_t len) {
    while (len && ((uintptr_t)p & 7)) {
        crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
        len--;
    }
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= crc;
        crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^
              table[4][(w >> 24) & 0xff] ^ table[3][(w >> 32) & 0xff] ^
              table[2][(w >> 40) & 0xff] ^ table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
        p += 8;
        len -= 8;
    }
    while (len--)
        crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
/* While at least 3 * @block bytes remain: three streams over adjacent blocks of @block bytes,
 * combined with the @shift tables for @block. Advances *@pp and *@lenp; inlined with a
 * constant @block for each size. */
__attribute__((target("sse4.2"), always_inline)) static inline uint64_t
crc_sse42_3way(uint64_t c, const uint8_t **pp, size_t *lenp, size_t block,
               uint32_t shift[4][256]) {
    const uint8_t *p = *pp;
    size_t len = *lenp;
    while (len >= 3 * block) {
        uint64_t c1 = 0, c2 = 0;
        const uint8_t *end = p + block;
        do {
            uint64_t w0, w1, w2;
            memcpy(&w0, p, 8);
            memcpy(&w1, p + block, 8);
            memcpy(&w2, p + 2 * block, 8);
            c = __builtin_ia32_crc32di(c, w0);
            c1 = __builtin_ia32_crc32di(c1, w1);
            c2 = __builtin_ia32_crc32di(c2, w2);
            p += 8;
        } while (p < end);
        c = crc_shift(shift, (uint32_t)c) ^ (uint32_t)c1;
        c = crc_shift(shift, (uint32_t)c) ^ (uint32_t)c2;
        p += 2 * block;
        len -= 3 * block;
    }
    *pp = p;
    *lenp = len;
    return c;
}

__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t crc, const uint8_t *p,
                                                             size_t len) {
    uint64_t c = crc;
    while (len && ((uintptr_t)p & 7)) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        len--;
    }
    c = crc_sse42_3way(c, &p, &len, SF_CRC_LONG, shift_long);
    c = crc_sse42_3way(c, &p, &len, SF_CRC_SHORT, shift_short);
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        len -= 8;
    }
    while (len--)
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    return (uint32_t)c;
}
#endif

uint32_t sf_crc32c(uint32_t crc, const void *p, size_t len) {
    pthread_once(&init_once, init);
    crc = ~crc;
#if defined(__x86_64__)
    if (have_sse42)
        return ~crc_sse42(crc, p, len);
#endif
    return ~crc_table(crc, p, len);
}
