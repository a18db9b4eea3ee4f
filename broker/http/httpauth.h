/* HTTP basic authentication (http.auth.file): a credentials file of "user:{SHA}<base64>" or
 * "user:{SHA256}<base64>" lines (the hash of the password; htpasswd -s writes the first),
 * '#' comments and blank lines ignored. Read once at start-up. */
#ifndef SF_HTTPAUTH_H
#define SF_HTTPAUTH_H

#include <stddef.h>

typedef struct sf_httpauth sf_httpauth_t;

/* Load @path. NULL with a sentence in @errstr when it cannot be read or a line is not
 * understood. */
sf_httpauth_t *sf_httpauth_load(const char *path, char *errstr, size_t errstr_size);

void sf_httpauth_free(sf_httpauth_t *a);

/* 1 when @authorization (the request's Authorization header, may be NULL) carries a user and
 * password of the file. */
int sf_httpauth_check(const sf_httpauth_t *a, const char *authorization);

#endif
