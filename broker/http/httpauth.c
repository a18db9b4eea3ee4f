/* HTTP basic authentication (see httpauth.h). */
#include "config.h"

#include "httpauth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "base64.h"

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
    unsigned char *raw;
    size_t len;
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
    if (!(raw = sf_base64_decode(b64, strlen(b64), &len)))
        return -1;
    if (len != (size_t)EVP_MD_size(u->md) || !(u->name = strdup(line))) {
        free(raw);
        return -1;
    }
    memcpy(u->hash, raw, len);
    u->hash_len = (unsigned)len;
    free(raw);
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
    unsigned char hash[EVP_MAX_MD_SIZE];
    unsigned hash_len;
    const char *b64;
    char *plain, *colon;
    size_t n, i;
    int ok = 0;
    if (!authorization || strncasecmp(authorization, "Basic ", 6) != 0)
        return 0;
    for (b64 = authorization + 6; *b64 == ' '; b64++)
        ;
    if (!(plain = sf_base64_decode(b64, strlen(b64), &n)))
        return 0;
    if ((colon = memchr(plain, ':', n))) {
        *colon = '\0';
        for (i = 0; i < a->n && strcmp(a->users[i].name, plain); i++)
            ;
        ok = i < a->n &&
             EVP_Digest(colon + 1, n - (size_t)(colon + 1 - plain), hash, &hash_len,
                        a->users[i].md, NULL) &&
             hash_len == a->users[i].hash_len &&
             CRYPTO_memcmp(hash, a->users[i].hash, hash_len) == 0;
    }
    free(plain);
    return ok;
}
