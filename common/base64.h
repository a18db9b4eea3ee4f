/* Base64 (RFC 4648, with padding) through OpenSSL's EVP_EncodeBlock / EVP_DecodeBlock, for the
 * JSON the broker keeps in ZooKeeper and serves over HTTP. */
#ifndef SF_BASE64_H
#define SF_BASE64_H

#include <stddef.h>

/* @n bytes of @p as a NUL-terminated base64 string (malloc'd); NULL on no memory. */
char *sf_base64_encode(const void *p, size_t n);

/* Decode the @n characters of @s (a multiple of 4, padded) into a malloc'd buffer with a NUL
 * after the @*len bytes; NULL when @s is not base64 or on no memory. */
void *sf_base64_decode(const char *s, size_t n, size_t *len);

#endif
