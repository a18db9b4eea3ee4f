/* Java-properties parser (see props.h for the accepted syntax). */
#include "props.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

struct sf_props {
    char *name;
    sf_prop_t *items; /* in file order; keys and values are malloc'd */
    size_t n, cap;
    /* Open-addressing hash of key -> index + 1 in items (0 = empty slot). */
    size_t *hash;
    size_t hcap; /* power of two, >= 2 * n */
};

/* FNV-1a */
static size_t key_hash(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (size_t)h;
}

static size_t *hash_slot(const sf_props_t *props, const char *key) {
    size_t mask = props->hcap - 1, i = key_hash(key) & mask;
    for (;; i = (i + 1) & mask) {
        size_t v = props->hash[i];
        if (!v || !strcmp(props->items[v - 1].key, key))
            return &props->hash[i];
    }
}

static int hash_rebuild(sf_props_t *props, size_t hcap) {
    size_t *h = calloc(hcap, sizeof(*h)), i;
    if (!h)
        return SF_ERR_NOMEM;
    free(props->hash);
    props->hash = h;
    props->hcap = hcap;
    for (i = 0; i < props->n; i++)
        *hash_slot(props, props->items[i].key) = i + 1;
    return SF_OK;
}

/* Add an entry (takes ownership of @key and @value). A key seen before is removed from its old
 * place so iteration follows the order of final definitions. */
static int props_add(sf_props_t *props, char *key, char *value, int line) {
    size_t *slot;
    if (props->n == props->cap) {
        size_t cap = props->cap ? props->cap * 2 : 32;
        sf_prop_t *items = realloc(props->items, cap * sizeof(*items));
        if (!items)
            return SF_ERR_NOMEM;
        props->items = items;
        props->cap = cap;
    }
    if (props->hcap < 2 * (props->n + 1)) {
        if (hash_rebuild(props, props->hcap ? props->hcap * 2 : 64) != SF_OK)
            return SF_ERR_NOMEM;
    }
    slot = hash_slot(props, key);
    if (*slot) {
        size_t old = *slot - 1;
        free((char *)props->items[old].key);
        free((char *)props->items[old].value);
        memmove(&props->items[old], &props->items[old + 1],
                (props->n - old - 1) * sizeof(props->items[0]));
        props->n--;
        props->items[props->n].key = key;
        props->items[props->n].value = value;
        props->items[props->n].line = line;
        props->n++;
        /* Indexes after @old moved down by one. */
        return hash_rebuild(props, props->hcap);
    }
    props->items[props->n].key = key;
    props->items[props->n].value = value;
    props->items[props->n].line = line;
    props->n++;
    *slot = props->n;
    return SF_OK;
}

static int is_ws(char c) {
    return c == ' ' || c == '\t' || c == '\f';
}

static int hexval(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static size_t utf8_put(char *out, uint32_t cp) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Parser state over the whole text. */
typedef struct pstate {
    const char *p, *end;
    int line;      /* current physical line */
    const char *name;
    char *errstr;
    size_t errstr_size;
} pstate_t;

/* Read 4 hex digits after "\u" at *pp (bounded by @lend). */
static int read_u4(const char **pp, const char *lend, uint32_t *out) {
    const char *p = *pp;
    uint32_t v = 0;
    int i;
    for (i = 0; i < 4; i++) {
        int h = p + i < lend ? hexval(p[i]) : -1;
        if (h < 0)
            return -1;
        v = v << 4 | (uint32_t)h;
    }
    *pp = p + 4;
    *out = v;
    return 0;
}

/* Collect one logical line (joining continuations) starting at the current position, which is
 * at the first non-blank character of a non-comment line. Unescapes it into @buf as
 * key '\0' value '\0'. Returns SF_OK or an error with errstr filled. */
static int parse_logical(pstate_t *ps, char *buf, char **keyp, char **valp) {
    /* Phases: 0 = key, 1 = after key (separator), 2 = value. */
    int phase = 0, start_line = ps->line;
    char *o = buf, *key = buf, *val = NULL;
    size_t sig = 0; /* length of the value up to its last significant character */
    const char *p = ps->p, *end = ps->end;

    for (;;) {
        char c;
        if (p >= end || *p == '\n' || *p == '\r') {
            /* End of the physical line without a continuation: done. */
            if (p < end) {
                if (*p == '\r' && p + 1 < end && p[1] == '\n')
                    p++;
                p++;
                ps->line++;
            }
            break;
        }
        c = *p;
        if (phase == 1) {
            /* Between key and value: blanks, then at most one '=' or ':', then blanks. */
            if (is_ws(c)) {
                p++;
                continue;
            }
            if (c == '=' || c == ':') {
                p++;
                while (p < end && is_ws(*p))
                    p++;
            }
            phase = 2;
            val = o;
            sig = 0;
            continue;
        }
        if (c == '\\') {
            const char *q = p + 1;
            if (q >= end || *q == '\n' || *q == '\r') {
                /* Continuation: skip the line end and the next line's leading blanks. */
                if (q < end) {
                    if (*q == '\r' && q + 1 < end && q[1] == '\n')
                        q++;
                    q++;
                    ps->line++;
                }
                while (q < end && is_ws(*q))
                    q++;
                p = q;
                continue;
            }
            switch (*q) {
            case 'n': *o++ = '\n'; q++; break;
            case 't': *o++ = '\t'; q++; break;
            case 'r': *o++ = '\r'; q++; break;
            case 'f': *o++ = '\f'; q++; break;
            case 'u': {
                uint32_t cp, lo;
                const char *u = q + 1;
                if (read_u4(&u, end, &cp) < 0) {
                    sf_errf(ps->errstr, ps->errstr_size,
                           "%s:%d: malformed \\uXXXX escape (expected 4 hexadecimal digits)",
                           ps->name, ps->line);
                    return SF_ERR_MALFORMED;
                }
                if (cp == 0) {
                    sf_errf(ps->errstr, ps->errstr_size,
                           "%s:%d: \\u0000 is not allowed (NUL characters cannot be stored)",
                           ps->name, ps->line);
                    return SF_ERR_MALFORMED;
                }
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    if (u + 1 < end && u[0] == '\\' && u[1] == 'u') {
                        const char *u2 = u + 2;
                        if (read_u4(&u2, end, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
                            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                            u = u2;
                        } else {
                            cp = 0xFFFFFFFF;
                        }
                    } else {
                        cp = 0xFFFFFFFF;
                    }
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    cp = 0xFFFFFFFF;
                }
                if (cp == 0xFFFFFFFF) {
                    sf_errf(ps->errstr, ps->errstr_size,
                           "%s:%d: \\u escape is an unpaired UTF-16 surrogate", ps->name, ps->line);
                    return SF_ERR_MALFORMED;
                }
                o += utf8_put(o, cp);
                q = u;
                break;
            }
            default:
                /* Any other escaped character stands for itself (\= \: \# \! \  \\). */
                *o++ = *q++;
                break;
            }
            p = q;
            if (phase == 2)
                sig = (size_t)(o - val);
            continue;
        }
        if (phase == 0 && (c == '=' || c == ':' || is_ws(c))) {
            *o++ = '\0';
            phase = 1;
            continue;
        }
        *o++ = c;
        p++;
        if (phase == 2 && !is_ws(c))
            sig = (size_t)(o - val);
    }
    ps->p = p;
    if (phase == 0)
        *o++ = '\0';
    if (!val) {
        val = o;
        sig = 0;
    }
    val[sig] = '\0';
    if (!*key) {
        sf_errf(ps->errstr, ps->errstr_size, "%s:%d: empty key (a line may not start with '=' or ':')",
               ps->name, start_line);
        return SF_ERR_MALFORMED;
    }
    *keyp = key;
    *valp = val;
    return SF_OK;
}

int sf_props_parse(const char *text, size_t len, const char *name, sf_props_t **out, char *errstr,
                   size_t errstr_size) {
    sf_props_t *props;
    pstate_t ps;
    char *buf = NULL;
    int rc = SF_ERR_NOMEM;

    *out = NULL;
    props = calloc(1, sizeof(*props));
    if (!props || !(props->name = strdup(name ? name : "(properties)")))
        goto nomem;
    /* Unescaping never makes text longer (\uXXXX: 6 bytes -> at most 3; a pair: 12 -> 4), so
     * one scratch buffer of the file's size (+2 NULs) holds any logical line. */
    buf = malloc(len + 2);
    if (!buf)
        goto nomem;

    {
        const char *nul = len ? memchr(text, '\0', len) : NULL;
        if (nul) {
            const char *q;
            int line = 1;
            for (q = text; q < nul; q++)
                if (*q == '\n' || (*q == '\r' && (q + 1 == nul || q[1] != '\n')))
                    line++;
            sf_errf(errstr, errstr_size, "%s:%d: the file contains a NUL byte (not a text file?)",
                   props->name, line);
            rc = SF_ERR_MALFORMED;
            goto err;
        }
    }
    ps.p = text;
    ps.end = text + len;
    ps.line = 1;
    ps.name = props->name;
    ps.errstr = errstr;
    ps.errstr_size = errstr_size;
    while (ps.p < ps.end) {
        char *key, *val, *k, *v;
        int line;
        while (ps.p < ps.end && is_ws(*ps.p))
            ps.p++;
        if (ps.p >= ps.end)
            break;
        if (*ps.p == '\n' || *ps.p == '\r') {
            if (*ps.p == '\r' && ps.p + 1 < ps.end && ps.p[1] == '\n')
                ps.p++;
            ps.p++;
            ps.line++;
            continue;
        }
        if (*ps.p == '#' || *ps.p == '!') {
            /* A comment ends at the line end; a trailing backslash does not continue it. */
            while (ps.p < ps.end && *ps.p != '\n' && *ps.p != '\r')
                ps.p++;
            continue;
        }
        line = ps.line;
        rc = parse_logical(&ps, buf, &key, &val);
        if (rc != SF_OK)
            goto err;
        k = strdup(key);
        v = strdup(val);
        if (!k || !v || props_add(props, k, v, line) != SF_OK) {
            free(k);
            free(v);
            goto nomem;
        }
    }
    free(buf);
    *out = props;
    return SF_OK;

nomem:
    rc = SF_ERR_NOMEM;
    sf_errf(errstr, errstr_size, "%s: out of memory", name ? name : "(properties)");
err:
    free(buf);
    sf_props_free(props);
    return rc;
}

int sf_props_load(const char *path, sf_props_t **out, char *errstr, size_t errstr_size) {
    int fd, rc;
    struct stat st;
    char *text = NULL;
    size_t len = 0, cap;

    *out = NULL;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        sf_errf(errstr, errstr_size, "%s: cannot open: %s", path, strerror(errno));
        return SF_ERR_IO;
    }
    if (fstat(fd, &st) < 0) {
        sf_errf(errstr, errstr_size, "%s: cannot stat: %s", path, strerror(errno));
        close(fd);
        return SF_ERR_IO;
    }
    if (S_ISDIR(st.st_mode)) {
        sf_errf(errstr, errstr_size, "%s: is a directory, not a properties file", path);
        close(fd);
        return SF_ERR_IO;
    }
    if (st.st_size > SF_PROPS_MAX_FILE_SIZE) {
        sf_errf(errstr, errstr_size, "%s: file too large (%lld bytes; at most %d)", path,
               (long long)st.st_size, SF_PROPS_MAX_FILE_SIZE);
        close(fd);
        return SF_ERR_TOOLARGE;
    }
    /* Read until EOF, whatever the size said (it may be a pipe or growing), up to the cap. */
    cap = (size_t)st.st_size + 1;
    if (cap < 4096)
        cap = 4096;
    text = malloc(cap);
    if (!text)
        goto nomem;
    for (;;) {
        ssize_t n;
        if (len == cap) {
            char *t;
            cap = cap * 2 > (size_t)SF_PROPS_MAX_FILE_SIZE + 1 ? (size_t)SF_PROPS_MAX_FILE_SIZE + 1
                                                               : cap * 2;
            if (!(t = realloc(text, cap)))
                goto nomem;
            text = t;
        }
        n = read(fd, text + len, cap - len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            sf_errf(errstr, errstr_size, "%s: cannot read: %s", path, strerror(errno));
            free(text);
            close(fd);
            return SF_ERR_IO;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len > SF_PROPS_MAX_FILE_SIZE) {
            sf_errf(errstr, errstr_size, "%s: file too large (more than %d bytes)", path,
                   SF_PROPS_MAX_FILE_SIZE);
            free(text);
            close(fd);
            return SF_ERR_TOOLARGE;
        }
    }
    close(fd);
    rc = sf_props_parse(text, len, path, out, errstr, errstr_size);
    free(text);
    return rc;

nomem:
    sf_errf(errstr, errstr_size, "%s: out of memory", path);
    free(text);
    close(fd);
    return SF_ERR_NOMEM;
}

const char *sf_props_name(const sf_props_t *props) {
    return props->name;
}

size_t sf_props_count(const sf_props_t *props) {
    return props->n;
}

const sf_prop_t *sf_props_at(const sf_props_t *props, size_t i) {
    return i < props->n ? &props->items[i] : NULL;
}

const sf_prop_t *sf_props_find(const sf_props_t *props, const char *key) {
    size_t v;
    if (!props->hcap)
        return NULL;
    v = *hash_slot(props, key);
    return v ? &props->items[v - 1] : NULL;
}

const char *sf_props_get(const sf_props_t *props, const char *key) {
    const sf_prop_t *pr = sf_props_find(props, key);
    return pr ? pr->value : NULL;
}

void sf_props_free(sf_props_t *props) {
    size_t i;
    if (!props)
        return;
    for (i = 0; i < props->n; i++) {
        free((char *)props->items[i].key);
        free((char *)props->items[i].value);
    }
    free(props->items);
    free(props->hash);
    free(props->name);
    free(props);
}
