/* Base64 (see base64.h). */
#include "base64.h"

#include <stdlib.h>

#include <openssl/evp.h>

char *sf_base64_encode(const void *p, size_t n) {
    char *s = n < (size_t)1 << 30 ? malloc(4 * ((n + 2) / 3) + 1) : NULL;
    if (s)
        EVP_EncodeBlock((unsigned char *)s, p, (int)n);
    return s;
}

void *sf_base64_decode(const char *s, size_t n, size_t *len) {
    unsigned char *out;
    int r;
    if (n % 4 || n >= (size_t)1 << 30 || !(out = malloc(n / 4 * 3 + 1)))
        return NULL;
    if ((r = EVP_DecodeBlock(out, (const unsigned char *)s, (int)n)) < 0) {
        free(out);
        return NULL;
    }
    *len = (size_t)r - (n && s[n - 1] == '=') - (n > 1 && s[n - 2] == '=');
    out[*len] = '\0';
    return out;
}
