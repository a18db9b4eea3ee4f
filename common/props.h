/* Java-properties files (Kafka's server.properties format).
 *
 * Supported syntax (a subset of java.util.Properties.load):
 *   - one entry per logical line: `key=value`, `key: value` or `key value`; the key ends at the
 *     first unescaped '=', ':' or whitespace; whitespace around the key and the value is trimmed
 *     (Java keeps trailing whitespace in values; we drop it unless it is escaped as `\ `);
 *   - lines whose first non-blank character is '#' or '!' are comments; blank lines are ignored;
 *   - a line ending in an odd number of backslashes continues on the next line (leading
 *     whitespace of the continuation is skipped);
 *   - escapes: `\\` `\n` `\t` `\r` `\f` `\uXXXX` (UTF-16 code unit, surrogate pairs combined,
 *     stored as UTF-8); any other escaped character stands for itself (`\=`, `\:`, `\ `, `\#`);
 *   - line ends: LF, CRLF or CR. The file is read as bytes (UTF-8 expected).
 * A key given twice: the last definition wins (as in Java). Errors: a malformed `\u` escape,
 * `\u0000`, an unpaired surrogate, an empty key, a NUL byte, an unreadable or over-large file. */
#ifndef SF_PROPS_H
#define SF_PROPS_H

#include <stddef.h>

/* The largest file sf_props_load() accepts. */
#define SF_PROPS_MAX_FILE_SIZE (16 * 1024 * 1024)

typedef struct sf_props sf_props_t;

/* One entry. Strings are NUL-terminated, owned by the sf_props_t. */
typedef struct sf_prop {
    const char *key;
    const char *value; /* "" when the line has no value */
    int line;          /* 1-based line where the entry starts */
} sf_prop_t;

/* Read and parse @path. On success *out is a new object (free with sf_props_free) and SF_OK is
 * returned. On failure returns SF_ERR_IO (file cannot be read), SF_ERR_MALFORMED (bad syntax),
 * SF_ERR_TOOLARGE or SF_ERR_NOMEM, and writes "PATH: reason" or "PATH:LINE: reason" into
 * @errstr (if not NULL). */
int sf_props_load(const char *path, sf_props_t **out, char *errstr, size_t errstr_size);

/* Parse @len bytes of @text (need not be NUL-terminated). @name is used in error messages in
 * place of a path (borrowed). Same results as sf_props_load. */
int sf_props_parse(const char *text, size_t len, const char *name, sf_props_t **out, char *errstr,
                   size_t errstr_size);

/* The path or name the properties were loaded from (owned by @props). */
const char *sf_props_name(const sf_props_t *props);

/* Number of distinct keys. */
size_t sf_props_count(const sf_props_t *props);

/* The @i-th entry (0 <= i < count) in file order of each key's final definition; NULL if @i is
 * out of range. The pointer is owned by @props. */
const sf_prop_t *sf_props_at(const sf_props_t *props, size_t i);

/* The entry for @key, or NULL. Owned by @props. */
const sf_prop_t *sf_props_find(const sf_props_t *props, const char *key);

/* The value for @key, or NULL when the key is absent. Owned by @props. */
const char *sf_props_get(const sf_props_t *props, const char *key);

/* Free everything (NULL is allowed). */
void sf_props_free(sf_props_t *props);

#endif
