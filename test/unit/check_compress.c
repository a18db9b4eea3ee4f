/* Unit tests for common/compress: round trips, golden vectors from another Kafka client,
 * truncated and garbage input, and decompression bombs against the output cap. */
#include <check.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "buf.h"
#include "compress.h"
#include "err.h"

#define MIB (1024 * 1024)

static const sf_compress_codec_t all_codecs[] = {SF_COMPRESS_NONE, SF_COMPRESS_GZIP,
                                                 SF_COMPRESS_SNAPPY, SF_COMPRESS_LZ4,
                                                 SF_COMPRESS_ZSTD};
static const sf_compress_codec_t real_codecs[] = {SF_COMPRESS_GZIP, SF_COMPRESS_SNAPPY,
                                                  SF_COMPRESS_LZ4, SF_COMPRESS_ZSTD};
#define NCODECS(a) (sizeof(a) / sizeof(a[0]))

/* The text every golden vector below decompresses to (213 bytes). */
#define GOLDEN_LINE "StreamFlow golden vector: the quick brown fox jumps over the lazy dog. "
static const char golden_text[] = GOLDEN_LINE GOLDEN_LINE GOLDEN_LINE;

/* Compressed with Debian's python3-kafka 2.0.2 (kafka.codec *_encode on golden_text). */
static const char golden_gzip[] =
    "1f8b0800ebf40b6b02ff0b2e294a4dcc75cbc92f5748cfcf4949cd53284b4d2ec92fb25228c94855282ccd4c"
    "ce56482aca2fcf5348cbaf50c82acd2d2856c82f4b2d024be72456552aa4e4a7eb29040f2a6300bd7ed90ad5"
    "000000";
/* snappy_encode default: xerial framing, one chunk. */
static const char golden_snappy_xerial[] =
    "82534e4150505900000000010000000100000052d501e053747265616d466c6f7720676f6c64656e20766563"
    "746f723a2074686520717569636b2062726f776e20666f78206a756d7073206f76657220011f246c617a7920"
    "646f672e20fe4700fe4700364700";
/* snappy_encode(xerial_compatible=True, xerial_blocksize=64): four chunks. */
static const char golden_snappy_xerial4[] =
    "82534e415050590000000001000000010000004340f03f53747265616d466c6f7720676f6c64656e20766563"
    "746f723a2074686520717569636b2062726f776e20666f78206a756d7073206f76657220746865206c617a00"
    "00004340f03f7920646f672e2053747265616d466c6f7720676f6c64656e20766563746f723a207468652071"
    "7569636b2062726f776e20666f78206a756d7073206f766572200000004340f03f746865206c617a7920646f"
    "672e2053747265616d466c6f7720676f6c64656e20766563746f723a2074686520717569636b2062726f776e"
    "20666f78206a756d7000000017155073206f76657220746865206c617a7920646f672e20";
/* snappy_encode(xerial_compatible=False): a bare snappy block. */
static const char golden_snappy_raw[] =
    "d501e053747265616d466c6f7720676f6c64656e20766563746f723a2074686520717569636b2062726f776e"
    "20666f78206a756d7073206f76657220011f246c617a7920646f672e20fe4700fe4700364700";
static const char golden_lz4[] =
    "04224d186840d5000000000000007750000000f12953747265616d466c6f7720676f6c64656e20766563746f"
    "723a2074686520717569636b2062726f776e20666f78206a756d7073206f7665721f00af6c617a7920646f67"
    "2e2047007650646f672e2000000000";
static const char golden_zstd[] =
    "28b52ffd20d555020022840f1780ab0ec02e09142d64badfc48424ce9c41040b0ee6420306d6959d07e926bc"
    "19853dc4cd0bb7f8259ca4e32d4ec339d8bb94d02d957e395e058672dd1002000b251042d12a28";

/* Decode @hex into a new buffer; *@len gets its size. */
static uint8_t *unhex(const char *hex, size_t *len) {
    size_t n = strlen(hex) / 2, i;
    uint8_t *p = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(p);
    for (i = 0; i < n; i++) {
        unsigned v;
        ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
        p[i] = (uint8_t)v;
    }
    *len = n;
    return p;
}

/* Deterministic incompressible bytes (xorshift32). */
static void fill_random(uint8_t *p, size_t n, uint32_t seed) {
    uint32_t x = seed ? seed : 1;
    size_t i;
    for (i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (uint8_t)(x >> 24);
    }
}

/* Compressible bytes: text-like lines with a counter. */
static void fill_text(uint8_t *p, size_t n) {
    size_t i = 0;
    unsigned k = 0;
    while (i < n) {
        char line[64];
        int m = snprintf(line, sizeof(line), "record %u: key=user-%u value=ok\n", k, k % 97);
        size_t c = (size_t)m < n - i ? (size_t)m : n - i;
        memcpy(p + i, line, c);
        i += c;
        k++;
    }
}

/* Compress @in, check the result decompresses to @in with an exact cap and fails one byte
 * under it; output is appended after a 3-byte prefix that must survive. */
static void roundtrip(sf_compress_codec_t c, const uint8_t *in, size_t len) {
    sf_wbuf_t z, d;
    sf_wbuf_init(&z);
    sf_wbuf_init(&d);
    sf_wbuf_raw(&z, "pre", 3);
    ck_assert_int_eq(sf_compress(c, -1, in, len, &z), SF_OK);
    ck_assert(z.len > 3 || (c == SF_COMPRESS_NONE && len == 0));
    ck_assert(memcmp(z.p, "pre", 3) == 0);
    sf_wbuf_raw(&d, "PRE", 3);
    ck_assert_msg(sf_decompress(c, z.p + 3, z.len - 3, len, &d) == SF_OK, "codec %s len %zu",
                  sf_compress_codec_name(c), len);
    ck_assert_uint_eq(d.len, 3 + len);
    ck_assert(memcmp(d.p, "PRE", 3) == 0);
    ck_assert(len == 0 || memcmp(d.p + 3, in, len) == 0);
    if (len > 0) {
        ck_assert_int_eq(sf_decompress(c, z.p + 3, z.len - 3, len - 1, &d), SF_ERR_TOOLARGE);
        ck_assert_uint_eq(d.len, 3 + len); /* nothing appended on failure */
    }
    sf_wbuf_free(&z);
    sf_wbuf_free(&d);
}

START_TEST(test_codec_names) {
    sf_compress_codec_t c = SF_COMPRESS_NONE;
    size_t i;
    for (i = 0; i < NCODECS(all_codecs); i++) {
        ck_assert_int_eq(sf_compress_codec_parse(sf_compress_codec_name(all_codecs[i]), &c),
                         SF_OK);
        ck_assert_int_eq(c, all_codecs[i]);
    }
    ck_assert_str_eq(sf_compress_codec_name(SF_COMPRESS_SNAPPY), "snappy");
    ck_assert_int_eq(sf_compress_codec_parse("lz4", &c), SF_OK);
    ck_assert_int_eq(c, 3);
    ck_assert_int_eq(sf_compress_codec_parse("LZ4", &c), SF_ERR_INVALID);
    ck_assert_int_eq(sf_compress_codec_parse("producer", &c), SF_ERR_INVALID);
    ck_assert_int_eq(sf_compress_codec_parse("", &c), SF_ERR_INVALID);
    ck_assert_int_eq(sf_compress_codec_parse(NULL, &c), SF_ERR_INVALID);
    ck_assert_int_eq(c, 3); /* untouched on failure */
    ck_assert_str_eq(sf_compress_codec_name((sf_compress_codec_t)5), "unknown");
}
END_TEST

START_TEST(test_roundtrip_small) {
    size_t i;
    for (i = 0; i < NCODECS(all_codecs); i++) {
        roundtrip(all_codecs[i], NULL, 0);
        roundtrip(all_codecs[i], (const uint8_t *)"x", 1);
        roundtrip(all_codecs[i], (const uint8_t *)golden_text, sizeof(golden_text) - 1);
    }
}
END_TEST

START_TEST(test_roundtrip_1mib) {
    uint8_t *text = malloc(MIB), *rnd = malloc(MIB);
    size_t i;
    ck_assert_ptr_nonnull(text);
    ck_assert_ptr_nonnull(rnd);
    fill_text(text, MIB);
    fill_random(rnd, MIB, 12345);
    for (i = 0; i < NCODECS(all_codecs); i++) {
        roundtrip(all_codecs[i], text, MIB);
        roundtrip(all_codecs[i], rnd, MIB);
    }
    /* The compressible input really shrinks. */
    for (i = 0; i < NCODECS(real_codecs); i++) {
        sf_wbuf_t z;
        sf_wbuf_init(&z);
        ck_assert_int_eq(sf_compress(real_codecs[i], -1, text, MIB, &z), SF_OK);
        ck_assert_msg(z.len < MIB / 4, "%s: %zu", sf_compress_codec_name(real_codecs[i]), z.len);
        sf_wbuf_free(&z);
    }
    free(text);
    free(rnd);
}
END_TEST

START_TEST(test_levels) {
    static const struct {
        sf_compress_codec_t c;
        int level;
        int want;
    } vec[] = {{SF_COMPRESS_GZIP, 0, SF_OK},          {SF_COMPRESS_GZIP, 9, SF_OK},
               {SF_COMPRESS_GZIP, 10, SF_ERR_INVALID}, {SF_COMPRESS_GZIP, -2, SF_ERR_INVALID},
               {SF_COMPRESS_LZ4, 1, SF_OK},           {SF_COMPRESS_LZ4, 9, SF_OK},
               {SF_COMPRESS_LZ4, 13, SF_ERR_INVALID},  {SF_COMPRESS_ZSTD, 1, SF_OK},
               {SF_COMPRESS_ZSTD, 19, SF_OK},         {SF_COMPRESS_ZSTD, 1000, SF_ERR_INVALID},
               {SF_COMPRESS_SNAPPY, 1000, SF_OK},     {SF_COMPRESS_NONE, 1000, SF_OK}};
    size_t i;
    for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
        sf_wbuf_t z, d;
        sf_wbuf_init(&z);
        sf_wbuf_init(&d);
        ck_assert_int_eq(sf_compress(vec[i].c, vec[i].level, golden_text,
                                     sizeof(golden_text) - 1, &z),
                         vec[i].want);
        if (vec[i].want == SF_OK) {
            ck_assert_int_eq(sf_decompress(vec[i].c, z.p, z.len, 4096, &d), SF_OK);
            ck_assert_uint_eq(d.len, sizeof(golden_text) - 1);
            ck_assert(memcmp(d.p, golden_text, d.len) == 0);
        } else {
            ck_assert_uint_eq(z.len, 0);
        }
        sf_wbuf_free(&z);
        sf_wbuf_free(&d);
    }
}
END_TEST

static void check_golden(sf_compress_codec_t c, const char *hex) {
    size_t len;
    uint8_t *in = unhex(hex, &len);
    sf_wbuf_t d;
    sf_wbuf_init(&d);
    ck_assert_int_eq(sf_decompress(c, in, len, 4096, &d), SF_OK);
    ck_assert_uint_eq(d.len, sizeof(golden_text) - 1);
    ck_assert(memcmp(d.p, golden_text, d.len) == 0);
    /* Exactly the text's size is enough; one byte less is not. */
    sf_wbuf_reset(&d);
    ck_assert_int_eq(sf_decompress(c, in, len, sizeof(golden_text) - 1, &d), SF_OK);
    ck_assert_int_eq(sf_decompress(c, in, len, sizeof(golden_text) - 2, &d), SF_ERR_TOOLARGE);
    sf_wbuf_free(&d);
    free(in);
}

START_TEST(test_golden_vectors) {
    check_golden(SF_COMPRESS_GZIP, golden_gzip);
    check_golden(SF_COMPRESS_SNAPPY, golden_snappy_xerial);
    check_golden(SF_COMPRESS_SNAPPY, golden_snappy_xerial4);
    check_golden(SF_COMPRESS_SNAPPY, golden_snappy_raw);
    check_golden(SF_COMPRESS_LZ4, golden_lz4);
    check_golden(SF_COMPRESS_ZSTD, golden_zstd);
}
END_TEST

/* Our own framing: xerial header and chunk lengths for snappy, 64 KiB independent blocks
 * and no content size for lz4, a gzip header for gzip, zstd's magic for zstd. */
START_TEST(test_output_framing) {
    uint8_t *text = malloc(100000);
    sf_wbuf_t z;
    size_t pos, chunks = 0;
    ck_assert_ptr_nonnull(text);
    fill_text(text, 100000);
    sf_wbuf_init(&z);

    ck_assert_int_eq(sf_compress(SF_COMPRESS_SNAPPY, -1, text, 100000, &z), SF_OK);
    ck_assert(memcmp(z.p, "\x82SNAPPY\0\0\0\0\1\0\0\0\1", 16) == 0);
    for (pos = 16; pos < z.len; chunks++) {
        ck_assert_uint_le(pos + 4, z.len);
        pos += 4 + sf_load_be32(z.p + pos);
    }
    ck_assert_uint_eq(pos, z.len);
    ck_assert_uint_eq(chunks, 4); /* 100000 bytes in 32 KiB chunks */
    sf_wbuf_reset(&z);
    /* Empty input still has one chunk (a bare header is read as an unframed block by
     * librdkafka). */
    ck_assert_int_eq(sf_compress(SF_COMPRESS_SNAPPY, -1, NULL, 0, &z), SF_OK);
    ck_assert_uint_eq(z.len, 16 + 4 + 1);
    sf_wbuf_reset(&z);

    ck_assert_int_eq(sf_compress(SF_COMPRESS_LZ4, -1, text, 100000, &z), SF_OK);
    ck_assert_uint_eq(sf_load_be32(z.p), 0x04224d18); /* magic, little-endian 0x184D2204 */
    ck_assert_uint_eq(z.p[4] & 0xc0, 0x40);           /* version 01 */
    ck_assert_uint_eq(z.p[4] & 0x20, 0x20);           /* independent blocks */
    ck_assert_uint_eq(z.p[4] & 0x08, 0);              /* no content size */
    ck_assert_uint_eq(z.p[5], 0x40);                  /* 64 KiB max block */
    sf_wbuf_reset(&z);

    ck_assert_int_eq(sf_compress(SF_COMPRESS_GZIP, -1, text, 100000, &z), SF_OK);
    ck_assert_uint_eq(z.p[0], 0x1f);
    ck_assert_uint_eq(z.p[1], 0x8b);
    sf_wbuf_reset(&z);

    ck_assert_int_eq(sf_compress(SF_COMPRESS_ZSTD, -1, text, 100000, &z), SF_OK);
    ck_assert_uint_eq(sf_load_be32(z.p), 0x28b52ffd);
    sf_wbuf_free(&z);
    free(text);
}
END_TEST

START_TEST(test_concatenated) {
    /* Two gzip members / two zstd frames / two lz4 frames decode as their concatenation. */
    size_t i;
    for (i = 0; i < NCODECS(real_codecs); i++) {
        sf_compress_codec_t c = real_codecs[i];
        sf_wbuf_t z, d;
        if (c == SF_COMPRESS_SNAPPY)
            continue; /* xerial has one header followed by chunks */
        sf_wbuf_init(&z);
        sf_wbuf_init(&d);
        ck_assert_int_eq(sf_compress(c, -1, "abc", 3, &z), SF_OK);
        ck_assert_int_eq(sf_compress(c, -1, "defg", 4, &z), SF_OK);
        ck_assert_int_eq(sf_decompress(c, z.p, z.len, 100, &d), SF_OK);
        ck_assert_uint_eq(d.len, 7);
        ck_assert(memcmp(d.p, "abcdefg", 7) == 0);
        sf_wbuf_free(&z);
        sf_wbuf_free(&d);
    }
}
END_TEST

/* Every proper prefix of a compressed stream fails cleanly (nothing appended). xerial
 * snappy has no end marker, so a prefix ending on a chunk boundary is a valid shorter
 * stream: for it, the output must at least differ from the original. */
static void check_truncations(sf_compress_codec_t c, const uint8_t *z, size_t zlen,
                              const uint8_t *orig, size_t olen) {
    sf_wbuf_t d;
    size_t cut;
    sf_wbuf_init(&d);
    for (cut = 0; cut < zlen; cut++) {
        /* A private copy of the prefix, so ASan sees any read past it. */
        uint8_t *p = malloc(cut ? cut : 1);
        int rc;
        ck_assert_ptr_nonnull(p);
        memcpy(p, z, cut);
        sf_wbuf_reset(&d);
        rc = sf_decompress(c, p, cut, 4 * olen + 64, &d);
        if (c == SF_COMPRESS_SNAPPY && rc == SF_OK) {
            ck_assert(d.len < olen);
            ck_assert(d.len == 0 || memcmp(d.p, orig, d.len) == 0);
        } else {
            ck_assert_msg(rc == SF_ERR_CORRUPT, "%s cut %zu/%zu rc %d",
                          sf_compress_codec_name(c), cut, zlen, rc);
            ck_assert_uint_eq(d.len, 0);
        }
        free(p);
    }
    sf_wbuf_free(&d);
}

START_TEST(test_truncated) {
    uint8_t *text = malloc(70000);
    size_t i, len;
    uint8_t *g;
    ck_assert_ptr_nonnull(text);
    /* 70000 bytes of random data: several lz4 blocks and xerial chunks, some zstd blocks. */
    fill_random(text, 70000, 99);
    for (i = 0; i < NCODECS(real_codecs); i++) {
        sf_wbuf_t z;
        sf_wbuf_init(&z);
        ck_assert_int_eq(sf_compress(real_codecs[i], -1, golden_text, sizeof(golden_text) - 1,
                                     &z),
                         SF_OK);
        check_truncations(real_codecs[i], z.p, z.len, (const uint8_t *)golden_text,
                          sizeof(golden_text) - 1);
        sf_wbuf_reset(&z);
        ck_assert_int_eq(sf_compress(real_codecs[i], -1, text, 70000, &z), SF_OK);
        /* Every length near the start, at the block boundaries and at the end. */
        check_truncations(real_codecs[i], z.p, z.len < 300 ? z.len : 300, text, 70000);
        {
            size_t cut;
            sf_wbuf_t d;
            sf_wbuf_init(&d);
            for (cut = 300; cut < z.len; cut += (cut > z.len - 300 ? 1 : 997)) {
                int rc = sf_decompress(real_codecs[i], z.p, cut, 4 * MIB, &d);
                ck_assert(rc == SF_ERR_CORRUPT || (real_codecs[i] == SF_COMPRESS_SNAPPY &&
                                                   rc == SF_OK && d.len < 70000));
                sf_wbuf_reset(&d);
            }
            sf_wbuf_free(&d);
        }
        sf_wbuf_free(&z);
    }
    /* The multi-chunk xerial vector from the other client. */
    g = unhex(golden_snappy_xerial4, &len);
    check_truncations(SF_COMPRESS_SNAPPY, g, len, (const uint8_t *)golden_text,
                      sizeof(golden_text) - 1);
    free(g);
    free(text);
}
END_TEST

START_TEST(test_garbage) {
    uint8_t rnd[4096];
    static const char *const texts[] = {"hello, world", "\x82SNAPPY", "\x1f\x8b\x08",
                                        "\x04\x22\x4d\x18", "\x28\xb5\x2f\xfd"};
    size_t i, j;
    fill_random(rnd, sizeof(rnd), 7);
    for (i = 0; i < NCODECS(real_codecs); i++) {
        sf_wbuf_t d;
        sf_wbuf_init(&d);
        ck_assert_int_eq(sf_decompress(real_codecs[i], rnd, sizeof(rnd), MIB, &d),
                         SF_ERR_CORRUPT);
        ck_assert_int_eq(sf_decompress(real_codecs[i], rnd, sizeof(rnd), 16, &d),
                         SF_ERR_CORRUPT);
        for (j = 0; j < sizeof(texts) / sizeof(texts[0]); j++)
            ck_assert_msg(sf_decompress(real_codecs[i], texts[j], strlen(texts[j]), MIB,
                                        &d) == SF_ERR_CORRUPT,
                          "%s on text %zu", sf_compress_codec_name(real_codecs[i]), j);
        ck_assert_uint_eq(d.len, 0);
        sf_wbuf_free(&d);
    }
}
END_TEST

START_TEST(test_trailing_garbage) {
    size_t i;
    for (i = 0; i < NCODECS(real_codecs); i++) {
        sf_wbuf_t z, d;
        if (real_codecs[i] == SF_COMPRESS_SNAPPY)
            continue;
        sf_wbuf_init(&z);
        sf_wbuf_init(&d);
        ck_assert_int_eq(sf_compress(real_codecs[i], -1, "abc", 3, &z), SF_OK);
        sf_wbuf_raw(&z, "\x01\x02\x03\x04\x05\x06\x07\x08\x09", 9);
        ck_assert_int_eq(sf_decompress(real_codecs[i], z.p, z.len, 100, &d), SF_ERR_CORRUPT);
        ck_assert_uint_eq(d.len, 0);
        sf_wbuf_free(&z);
        sf_wbuf_free(&d);
    }
}
END_TEST

START_TEST(test_bad_args) {
    sf_wbuf_t z;
    sf_wbuf_init(&z);
    ck_assert_int_eq(sf_compress((sf_compress_codec_t)5, -1, "a", 1, &z), SF_ERR_UNSUPPORTED);
    ck_assert_int_eq(sf_decompress((sf_compress_codec_t)7, "a", 1, 10, &z), SF_ERR_UNSUPPORTED);
    ck_assert_int_eq(sf_decompress(SF_COMPRESS_NONE, "abcd", 4, 3, &z), SF_ERR_TOOLARGE);
    ck_assert_uint_eq(z.len, 0);
    /* A writer that already failed stays failed. */
    z.err = SF_ERR_NOMEM;
    ck_assert_int_eq(sf_compress(SF_COMPRESS_GZIP, -1, "a", 1, &z), SF_ERR_NOMEM);
    ck_assert_int_eq(sf_decompress(SF_COMPRESS_NONE, "a", 1, 10, &z), SF_ERR_NOMEM);
    sf_wbuf_free(&z);
}
END_TEST

/* ---- bombs: 100 MB of zeros, compressed by streaming so the test never holds it ---- */

#define BOMB_SIZE (100u * 1000 * 1000)

static void bomb_gzip(sf_wbuf_t *z, const uint8_t *zeros) {
    z_stream zs;
    size_t left = BOMB_SIZE;
    int rc;
    memset(&zs, 0, sizeof(zs));
    ck_assert_int_eq(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    do {
        size_t n = left < MIB ? left : MIB;
        left -= n;
        zs.next_in = (Bytef *)zeros;
        zs.avail_in = (uInt)n;
        do {
            uint8_t *p = sf_wbuf_reserve(z, 65536);
            ck_assert_ptr_nonnull(p);
            zs.next_out = p;
            zs.avail_out = 65536;
            rc = deflate(&zs, left ? Z_NO_FLUSH : Z_FINISH);
            ck_assert(rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR);
            z->len -= zs.avail_out;
        } while (zs.avail_out == 0 || (!left && rc != Z_STREAM_END));
    } while (left);
    deflateEnd(&zs);
}

static void bomb_zstd(sf_wbuf_t *z, const uint8_t *zeros) {
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    size_t left = BOMB_SIZE, rc;
    ck_assert_ptr_nonnull(cctx);
    /* Streaming without a pledged size: the frame does not state its content size. */
    do {
        size_t n = left < MIB ? left : MIB;
        ZSTD_inBuffer ib = {zeros, n, 0};
        left -= n;
        do {
            ZSTD_outBuffer ob;
            ob.dst = sf_wbuf_reserve(z, 65536);
            ck_assert_ptr_nonnull(ob.dst);
            ob.size = 65536;
            ob.pos = 0;
            rc = ZSTD_compressStream2(cctx, &ob, &ib, left ? ZSTD_e_continue : ZSTD_e_end);
            ck_assert(!ZSTD_isError(rc));
            z->len -= ob.size - ob.pos;
        } while (ib.pos < ib.size || (!left && rc != 0));
    } while (left);
    ZSTD_freeCCtx(cctx);
    ck_assert(ZSTD_getFrameContentSize(z->p, z->len) == ZSTD_CONTENTSIZE_UNKNOWN);
}

static void bomb_lz4(sf_wbuf_t *z, const uint8_t *zeros) {
    LZ4F_cctx *cctx;
    LZ4F_preferences_t prefs;
    size_t left = BOMB_SIZE, bound, n;
    memset(&prefs, 0, sizeof(prefs));
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    ck_assert(!LZ4F_isError(LZ4F_createCompressionContext(&cctx, LZ4F_VERSION)));
    bound = LZ4F_compressBound(MIB, &prefs) + LZ4F_HEADER_SIZE_MAX;
    n = LZ4F_compressBegin(cctx, sf_wbuf_reserve(z, bound), bound, &prefs);
    ck_assert(!LZ4F_isError(n));
    z->len -= bound - n;
    while (left) {
        size_t m = left < MIB ? left : MIB;
        left -= m;
        n = LZ4F_compressUpdate(cctx, sf_wbuf_reserve(z, bound), bound, zeros, m, NULL);
        ck_assert(!LZ4F_isError(n));
        z->len -= bound - n;
    }
    n = LZ4F_compressEnd(cctx, sf_wbuf_reserve(z, bound), bound, NULL);
    ck_assert(!LZ4F_isError(n));
    z->len -= bound - n;
    LZ4F_freeCompressionContext(cctx);
}

START_TEST(test_bombs) {
    uint8_t *zeros = calloc(1, MIB);
    size_t i;
    ck_assert_ptr_nonnull(zeros);
    for (i = 0; i < 3; i++) {
        sf_compress_codec_t c =
            i == 0 ? SF_COMPRESS_GZIP : i == 1 ? SF_COMPRESS_ZSTD : SF_COMPRESS_LZ4;
        sf_wbuf_t z, d;
        sf_wbuf_init(&z);
        sf_wbuf_init(&d);
        if (c == SF_COMPRESS_GZIP)
            bomb_gzip(&z, zeros);
        else if (c == SF_COMPRESS_ZSTD)
            bomb_zstd(&z, zeros);
        else
            bomb_lz4(&z, zeros);
        ck_assert_int_eq(z.err, SF_OK);
        ck_assert_uint_lt(z.len, BOMB_SIZE / 100); /* it is a bomb */
        ck_assert_int_eq(sf_decompress(c, z.p, z.len, MIB, &d), SF_ERR_TOOLARGE);
        ck_assert_uint_eq(d.len, 0);
        /* The output buffer never grew past the cap. */
        ck_assert_msg(d.cap <= MIB, "%s: cap %zu", sf_compress_codec_name(c), d.cap);
        /* With room for all of it, the same input decodes to 100 MB of zeros. */
        if (c != SF_COMPRESS_GZIP) {
            ck_assert_int_eq(sf_decompress(c, z.p, z.len, BOMB_SIZE, &d), SF_OK);
            ck_assert_uint_eq(d.len, BOMB_SIZE);
            ck_assert(memcmp(d.p, zeros, MIB) == 0 &&
                      memcmp(d.p + BOMB_SIZE - MIB, zeros, MIB) == 0);
        }
        sf_wbuf_free(&z);
        sf_wbuf_free(&d);
    }
    free(zeros);
}
END_TEST

/* Bombs whose size is stated up front (a zstd frame with content size, a snappy block
 * header, xerial chunks) are refused without allocating the output. */
START_TEST(test_bombs_stated_size) {
    uint8_t *zeros = calloc(1, 4 * MIB);
    size_t i;
    ck_assert_ptr_nonnull(zeros);
    for (i = 0; i < NCODECS(real_codecs); i++) {
        sf_wbuf_t z, d;
        sf_wbuf_init(&z);
        sf_wbuf_init(&d);
        ck_assert_int_eq(sf_compress(real_codecs[i], -1, zeros, 4 * MIB, &z), SF_OK);
        ck_assert_int_eq(sf_decompress(real_codecs[i], z.p, z.len, MIB, &d), SF_ERR_TOOLARGE);
        ck_assert_uint_eq(d.len, 0);
        ck_assert_uint_le(d.cap, MIB);
        sf_wbuf_free(&z);
        sf_wbuf_free(&d);
    }
    {
        /* A bare snappy block of 4 MiB zeros: its header states the size. */
        size_t max = snappy_max_compressed_length(4 * MIB), zlen = max;
        char *z = malloc(max);
        sf_wbuf_t d;
        ck_assert_ptr_nonnull(z);
        sf_wbuf_init(&d);
        ck_assert_int_eq(snappy_compress((const char *)zeros, 4 * MIB, z, &zlen), SNAPPY_OK);
        ck_assert_int_eq(sf_decompress(SF_COMPRESS_SNAPPY, z, zlen, MIB, &d), SF_ERR_TOOLARGE);
        ck_assert_uint_eq(d.cap, 0); /* refused before any allocation */
        ck_assert_int_eq(sf_decompress(SF_COMPRESS_SNAPPY, z, zlen, 4 * MIB, &d), SF_OK);
        ck_assert_uint_eq(d.len, 4 * MIB);
        /* The same header with its body missing is corrupt, not too large. */
        ck_assert_int_eq(sf_decompress(SF_COMPRESS_SNAPPY, z, 5, MIB, &d), SF_ERR_CORRUPT);
        sf_wbuf_free(&d);
        free(z);
    }
    free(zeros);
}
END_TEST

static Suite *compress_suite(void) {
    Suite *s = suite_create("compress");
    TCase *core = tcase_create("core"), *limits = tcase_create("limits");
    tcase_add_test(core, test_codec_names);
    tcase_add_test(core, test_roundtrip_small);
    tcase_add_test(core, test_roundtrip_1mib);
    tcase_add_test(core, test_levels);
    tcase_add_test(core, test_golden_vectors);
    tcase_add_test(core, test_output_framing);
    tcase_add_test(core, test_concatenated);
    tcase_add_test(limits, test_truncated);
    tcase_add_test(limits, test_garbage);
    tcase_add_test(limits, test_trailing_garbage);
    tcase_add_test(limits, test_bad_args);
    tcase_add_test(limits, test_bombs);
    tcase_add_test(limits, test_bombs_stated_size);
    /* The bombs compress 100 MB per codec; slow under sanitizers. */
    tcase_set_timeout(limits, 300);
    tcase_set_timeout(core, 120);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(compress_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
