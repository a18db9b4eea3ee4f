/* HTTP basic authentication (see httpauth.h). */
#include "config.h"

#include "httpauth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#define MAX_USERS 1000
#define MAX_LINE 1024

typedef struct user {
    char *name;
    const EVP_MD *md;            /* SHA-1 or SHA-256 */
    unsigned char hash[EVP_MAX_MD_SIZE];
    unsigned hash_len;
} user_t;

struct sf_httpauth {
    user_t *users;
    size_t n;
};

void sf_httpauth_free(sf_httpauth_t *a) {
    size_t i;
    if (!a)
        return;
    for (i = 0; i < a->n; i++)
        free(a->users[i].name);
    free(a->users);
    free(a);
}

/* Parse "user:{SHA}base64" into @u; -1 when it is not that. */
static int parse_line(char *line, user_t *u) {
    char *colon = strchr(line, ':'), *b64;
    unsigned char raw[EVP_MAX_MD_SIZE + 3];
    size_t n;
    int len;
    if (!colon || colon == line)
        return -1;
    *colon = '\0';
    b64 = colon + 1;
    if (!strncmp(b64, "{SHA}", 5)) {
        u->md = EVP_sha1();
        b64 += 5;
    } else if (!strncmp(b64, "{SHA256}", 8)) {
        u->md = EVP_sha256();
        b64 += 8;
    } else {
        return -1;
    }
    n = strlen(b64);
    if (n % 4 || n > 4 * ((sizeof(raw) - 3) / 3 + 1))
        return -1;
    if ((len = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)n)) < 0)
        return -1;
    len -= (n && b64[n - 1] == '=') + (n > 1 && b64[n - 2] == '=');
    if (len != EVP_MD_size(u->md) || !(u->name = strdup(line)))
        return -1;
    memcpy(u->hash, raw, (size_t)len);
    u->hash_len = (unsigned)len;
    return 0;
}

sf_httpauth_t *sf_httpauth_load(const char *path, char *errstr, size_t errstr_size) {
    FILE *f = fopen(path, "r");
    sf_httpauth_t *a = calloc(1, sizeof(*a));
    char line[MAX_LINE];
    int lineno = 0;
    if (!f || !a || !(a->users = calloc(MAX_USERS, sizeof(*a->users)))) {
        snprintf(errstr, errstr_size, "http.auth.file: cannot read %s", path);
        goto err;
    }
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '#')
            continue;
        if (a->n == MAX_USERS || parse_line(line, &a->users[a->n]) != 0) {
            snprintf(errstr, errstr_size, "http.auth.file: %s line %d is not user:{SHA}hash or "
                     "user:{SHA256}hash (at most %d users)", path, lineno, MAX_USERS);
            goto err;
        }
        a->n++;
    }
    fclose(f);
    return a;
err:
    if (f)
        fclose(f);
    sf_httpauth_free(a);
    return NULL;
}

int sf_httpauth_check(const sf_httpauth_t *a, const char *authorization) {
    unsigned char plain[512], hash[EVP_MAX_MD_SIZE];
    unsigned hash_len;
    const char *b64;
    char *colon;
    size_t n, i;
    int len;
    if (!authorization || strncasecmp(authorization, "Basic ", 6) != 0)
        return 0;
    for (b64 = authorization + 6; *b64 == ' '; b64++)
        ;
    n = strlen(b64);
    if (!n || n % 4 || n > 4 * (sizeof(plain) / 3 - 1))
        return 0;
    if ((len = EVP_DecodeBlock(plain, (const unsigned char *)b64, (int)n)) < 0)
        return 0;
    len -= (b64[n - 1] == '=') + (b64[n - 2] == '=');
    plain[len] = '\0';
    if (!(colon = memchr(plain, ':', (size_t)len)))
        return 0;
    *colon = '\0';
    for (i = 0; i < a->n; i++) {
        const user_t *u = &a->users[i];
        if (strcmp(u->name, (const char *)plain) != 0)
            continue;
        if (!EVP_Digest(colon + 1, strlen(colon + 1), hash, &hash_len, u->md, NULL))
            return 0;
        return hash_len == u->hash_len && CRYPTO_memcmp(hash, u->hash, hash_len) == 0;
    }
    return 0;
}
