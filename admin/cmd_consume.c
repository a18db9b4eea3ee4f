/* streamflow consume: print the records of a topic's partitions. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clidata.h"

static const char consume_usage[] =
    "Usage: streamflow consume TOPIC [OPTIONS]\n"
    "       streamflow consume TOPIC --group GROUP [OPTIONS]\n"
    "\n"
    "Print the records of TOPIC (every partition, or those given with --partition), one per\n"
    "line, until interrupted (SIGINT/SIGTERM) or a stop condition below is met. Then print\n"
    "\"Processed a total of N messages\" to standard error.\n"
    "\n"
    "Consumer group:\n"
    "  --group GROUP          join consumer group GROUP and read the partitions its\n"
    "                         coordinator assigns (shared with the group's other members),\n"
    "                         from the group's committed offsets; commit the offsets of the\n"
    "                         records printed (enable.auto.commit) and leave the group on exit.\n"
    "                         TOPIC may be a regular expression starting with ^ (POSIX\n"
    "                         extended, matched against whole topic names). Partitions without\n"
    "                         a committed offset start at the end, or with --from-beginning at\n"
    "                         the beginning (auto.offset.reset). --partition, --offset,\n"
    "                         --from-timestamp and --to-end do not apply\n"
    "\n"
    "Where to start (default: the end, i.e. only new records):\n"
    "  --from-beginning       the first offset of each partition\n"
    "  --offset OFFSET        N (absolute), -N (N records before the end), beginning or end\n"
    "  --from-timestamp T     the first record with a timestamp >= T, given in milliseconds\n"
    "                         since the epoch or as ISO 8601, e.g. 2024-05-01T12:00:00Z,\n"
    "                         2024-05-01T14:00:00.250+02:00 (without a zone: local time; a\n"
    "                         date alone is its midnight)\n"
    "  --partition N          read partition N only (repeatable)\n"
    "  --isolation-level L    read_uncommitted (the default: every record) or read_committed\n"
    "                         (the records of committed transactions only, up to the last\n"
    "                         stable offset)\n"
    "\n"
    "When to stop:\n"
    "  --max-messages N       after N records\n"
    "  --timeout-ms N         after N ms without a record (exit status 0)\n"
    "  --to-end               at the end of each partition as it was when the command started\n"
    "\n"
    "Output (default: the value of each record, then a newline; bytes are written as they\n"
    "are; a null key or value prints as nothing):\n"
    "  --format FMT           print FMT for each record, with %k key, %v value, %o offset,\n"
    "                         %p partition, %t timestamp (ms), %T topic, %h headers\n"
    "                         (k=v,k=v; a null header value prints as k alone), %s value\n"
    "                         size, %S key size, %% a percent sign; \\n newline, \\t tab,\n"
    "                         \\r, \\0, \\\\. A newline is not added: end FMT with \\n\n"
    "  --print-timestamp, --print-partition, --print-offset, --print-headers, --print-key\n"
    "                         as kafka-console-consumer's print.* properties: the fields,\n"
    "                         then the value, separated by --key-separator (default a tab):\n"
    "                         CreateTime:TS, Partition:P, Offset:O, headers as k:v,k:v (or\n"
    "                         NO_HEADERS), key; null keys and values print as \"null\"\n"
    "  --key-separator SEP    the separator of the --print-* fields (\\t: tab)\n"
    "  --output json          one JSON object per line: {\"topic\", \"partition\", \"offset\",\n"
    "                         \"timestamp\", \"timestamp_type\" (\"CreateTime\" or\n"
    "                         \"LogAppendTime\"), \"key\", \"value\", \"headers\": [{\"key\",\n"
    "                         \"value\"}]}. A key or value that is valid UTF-8 is a JSON\n"
    "                         string; otherwise it is base64 and the object has\n"
    "                         \"key_base64\": true or \"value_base64\": true (headers the\n"
    "                         same, inside each header object). Null is null.\n"
    "  -q, --quiet            do not print the \"Processed a total\" line\n";

enum {
    OPT_PARTITION = 0x200,
    OPT_FROM_BEGINNING,
    OPT_OFFSET,
    OPT_FROM_TS,
    OPT_MAX_MESSAGES,
    OPT_TIMEOUT_MS,
    OPT_TO_END,
    OPT_FORMAT,
    OPT_PRINT_KEY,
    OPT_PRINT_HEADERS,
    OPT_PRINT_OFFSET,
    OPT_PRINT_PARTITION,
    OPT_PRINT_TIMESTAMP,
    OPT_KEYSEP,
    OPT_GROUP,
    OPT_ISOLATION
};

/* ---- output format ---------------------------------------------------------------------- */

typedef enum {
    F_LIT,
    F_KEY,
    F_VALUE,
    F_OFFSET,
    F_PARTITION,
    F_TIMESTAMP,
    F_TSTYPE,
    F_TOPIC,
    F_HEADERS,
    F_VSIZE,
    F_KSIZE
} fmt_kind_t;

typedef struct fmt_seg {
    fmt_kind_t kind;
    const char *lit; /* F_LIT: points into fmt_t.text */
    size_t len;
} fmt_seg_t;

typedef struct fmt {
    fmt_seg_t seg[256];
    size_t n;
    char *text;       /* literal bytes, escapes resolved */
    size_t text_len;
    int kafka;        /* --print-*: "null" for null keys/values, headers as k:v or NO_HEADERS */
} fmt_t;

static int fmt_add(fmt_t *f, fmt_kind_t kind, const char *lit, size_t len) {
    if (f->n == sizeof(f->seg) / sizeof(f->seg[0]))
        return -1;
    if (kind == F_LIT && f->n > 0 && f->seg[f->n - 1].kind == F_LIT &&
        f->seg[f->n - 1].lit + f->seg[f->n - 1].len == lit) {
        f->seg[f->n - 1].len += len; /* adjacent literal bytes */
        return 0;
    }
    f->seg[f->n].kind = kind;
    f->seg[f->n].lit = lit;
    f->seg[f->n].len = len;
    f->n++;
    return 0;
}

/* Append literal bytes to f->text (sized for them by the caller) and a segment for them. */
static int fmt_lit(fmt_t *f, const char *s, size_t len) {
    char *dst = f->text + f->text_len;
    memcpy(dst, s, len);
    f->text_len += len;
    return fmt_add(f, F_LIT, dst, len);
}

/* Compile --format @s. Returns 0, or -1 after printing what is wrong. */
static int fmt_compile(const sf_cli_t *cli, fmt_t *f, const char *s) {
    f->text = malloc(strlen(s) + 1);
    if (!f->text) {
        sf_cli_error(cli, "out of memory");
        return -1;
    }
    for (const char *p = s; *p; p++) {
        int r;
        if (*p == '%') {
            fmt_kind_t k;
            switch (p[1]) {
            case 'k': k = F_KEY; break;
            case 'v': k = F_VALUE; break;
            case 'o': k = F_OFFSET; break;
            case 'p': k = F_PARTITION; break;
            case 't': k = F_TIMESTAMP; break;
            case 'T': k = F_TOPIC; break;
            case 'h': k = F_HEADERS; break;
            case 's': k = F_VSIZE; break;
            case 'S': k = F_KSIZE; break;
            case '%': k = F_LIT; break;
            default:
                sf_cli_error(cli, "--format: unknown conversion %%%.1s (see --help)", p + 1);
                return -1;
            }
            p++;
            r = k == F_LIT ? fmt_lit(f, "%", 1) : fmt_add(f, k, NULL, 0);
        } else if (*p == '\\') {
            char ch;
            switch (p[1]) {
            case 'n': ch = '\n'; break;
            case 't': ch = '\t'; break;
            case 'r': ch = '\r'; break;
            case '0': ch = '\0'; break;
            case '\\': ch = '\\'; break;
            default:
                sf_cli_error(cli, "--format: unknown escape \\%.1s (see --help)", p + 1);
                return -1;
            }
            p++;
            r = fmt_lit(f, &ch, 1);
        } else {
            r = fmt_lit(f, p, 1);
        }
        if (r < 0) {
            sf_cli_error(cli, "--format: too many conversions");
            return -1;
        }
    }
    return 0;
}

/* The kafka-console-consumer layout of the --print-* options. */
static int fmt_kafka(const sf_cli_t *cli, fmt_t *f, const char *sep, int ts, int part, int off,
                     int hdrs, int key) {
    size_t seplen = strlen(sep);

    f->kafka = 1;
    f->text = malloc(64 + 5 * seplen);
    if (!f->text) {
        sf_cli_error(cli, "out of memory");
        return -1;
    }
    if (ts) {
        fmt_add(f, F_TSTYPE, NULL, 0);
        fmt_lit(f, ":", 1);
        fmt_add(f, F_TIMESTAMP, NULL, 0);
        fmt_lit(f, sep, seplen);
    }
    if (part) {
        fmt_lit(f, "Partition:", 10);
        fmt_add(f, F_PARTITION, NULL, 0);
        fmt_lit(f, sep, seplen);
    }
    if (off) {
        fmt_lit(f, "Offset:", 7);
        fmt_add(f, F_OFFSET, NULL, 0);
        fmt_lit(f, sep, seplen);
    }
    if (hdrs) {
        fmt_add(f, F_HEADERS, NULL, 0);
        fmt_lit(f, sep, seplen);
    }
    if (key) {
        fmt_add(f, F_KEY, NULL, 0);
        fmt_lit(f, sep, seplen);
    }
    fmt_add(f, F_VALUE, NULL, 0);
    fmt_lit(f, "\n", 1);
    return 0;
}

static void put_i64(FILE *out, int64_t v) {
    char buf[24], *p = buf + sizeof(buf);
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    fwrite(p, 1, (size_t)(buf + sizeof(buf) - p), out);
}

static void put_bytes(FILE *out, const void *p, size_t len, int kafka) {
    if (!p) {
        if (kafka)
            fwrite("null", 1, 4, out);
        return;
    }
    fwrite(p, 1, len, out);
}

static void fmt_print(const fmt_t *f, const sf_message_t *m, FILE *out) {
    for (size_t i = 0; i < f->n; i++) {
        const fmt_seg_t *s = &f->seg[i];
        switch (s->kind) {
        case F_LIT: fwrite(s->lit, 1, s->len, out); break;
        case F_KEY: put_bytes(out, m->key, m->key_len, f->kafka); break;
        case F_VALUE: put_bytes(out, m->value, m->value_len, f->kafka); break;
        case F_OFFSET: put_i64(out, m->offset); break;
        case F_PARTITION: put_i64(out, m->partition); break;
        case F_TIMESTAMP: put_i64(out, m->timestamp); break;
        case F_TSTYPE: fputs(m->timestamp_type == 1 ? "LogAppendTime" : "CreateTime", out); break;
        case F_TOPIC: fputs(m->topic, out); break;
        case F_VSIZE: put_i64(out, m->value ? (int64_t)m->value_len : -1); break;
        case F_KSIZE: put_i64(out, m->key ? (int64_t)m->key_len : -1); break;
        case F_HEADERS:
            if (f->kafka && m->header_count == 0)
                fwrite("NO_HEADERS", 1, 10, out);
            for (size_t h = 0; h < m->header_count; h++) {
                const sf_header_t *hd = &m->headers[h];
                if (h)
                    putc(',', out);
                fputs(hd->key, out);
                if (f->kafka) {
                    putc(':', out);
                    put_bytes(out, hd->value, hd->value_len, 1);
                } else if (hd->value) {
                    putc('=', out);
                    fwrite(hd->value, 1, hd->value_len, out);
                }
            }
            break;
        }
    }
}

/* ---- JSON output ------------------------------------------------------------------------ */

static char *base64(const unsigned char *p, size_t len) {
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;
    size_t i;

    if (!out)
        return NULL;
    for (i = 0; i + 2 < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *o++ = tab[v >> 18];
        *o++ = tab[(v >> 12) & 63];
        *o++ = tab[(v >> 6) & 63];
        *o++ = tab[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0);
        *o++ = tab[v >> 18];
        *o++ = tab[(v >> 12) & 63];
        *o++ = i + 1 < len ? tab[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    *o = '\0';
    return out;
}

/* Set @obj[@name] to @p as a string (UTF-8) or base64 (then @obj[@name "_base64"] = true). */
static int json_bytes(json_t *obj, const char *name, const void *p, size_t len) {
    json_t *v;
    char flag[64];

    if (!p)
        return json_object_set_new(obj, name, json_null());
    v = json_stringn(p, len); /* NULL when not valid UTF-8 */
    if (v)
        return json_object_set_new(obj, name, v);
    {
        char *b = base64(p, len);
        if (!b)
            return -1;
        v = json_string(b);
        free(b);
    }
    snprintf(flag, sizeof(flag), "%s_base64", name);
    if (json_object_set_new(obj, name, v) < 0)
        return -1;
    return json_object_set_new(obj, flag, json_true());
}

static int json_print_message(const sf_message_t *m, FILE *out) {
    json_t *o = json_object(), *hs = json_array();
    int r = -1;

    if (!o || !hs)
        goto done;
    if (json_object_set_new(o, "topic", json_string(m->topic)) < 0 ||
        json_object_set_new(o, "partition", json_integer(m->partition)) < 0 ||
        json_object_set_new(o, "offset", json_integer(m->offset)) < 0 ||
        json_object_set_new(o, "timestamp", json_integer(m->timestamp)) < 0 ||
        json_object_set_new(o, "timestamp_type",
                            json_string(m->timestamp_type == 1 ? "LogAppendTime"
                                                               : "CreateTime")) < 0 ||
        json_bytes(o, "key", m->key, m->key_len) < 0 ||
        json_bytes(o, "value", m->value, m->value_len) < 0)
        goto done;
    for (size_t i = 0; i < m->header_count; i++) {
        json_t *h = json_object();
        if (!h || json_bytes(h, "key", m->headers[i].key, strlen(m->headers[i].key)) < 0 ||
            json_bytes(h, "value", m->headers[i].value, m->headers[i].value_len) < 0 ||
            json_array_append_new(hs, h) < 0) {
            json_decref(h);
            goto done;
        }
    }
    if (json_object_set(o, "headers", hs) < 0)
        goto done;
    if (json_dumpf(o, out, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0) {
        putc('\n', out);
        r = 0;
    }
done:
    json_decref(hs);
    json_decref(o);
    return r;
}

/* ---- start positions -------------------------------------------------------------------- */

/* ---- the command ------------------------------------------------------------------------ */

typedef struct part_state {
    int32_t id;
    int64_t low;   /* log start offset (read for --to-end and --offset -N) */
    int64_t end;   /* high watermark at start (idem) */
    int64_t start; /* the offset assigned at */
    int done;     /* --to-end reached, or a permanent error */
    int last_err; /* the last error event printed (printed again only when it changes) */
} part_state_t;

/* Where consume starts (from the command line). */
typedef struct consume_start {
    int by_time;          /* --from-timestamp */
    int64_t ts_ms;
    int64_t relative;     /* --offset -N: N */
    int64_t offset;       /* otherwise: an offset, SF_OFFSET_BEGINNING or SF_OFFSET_END */
    int to_end;
    int timeout_ms;
} consume_start_t;

/* Assign @parts at their start and, for --to-end, mark those with nothing to read as done
 * (counted in *@ndone). A Fetch parked at the broker (up to fetch.max.wait.ms) holds back
 * the ListOffsets requests queued behind it on the same connection, so the watermarks are
 * read before anything is assigned. Returns 0 or an error, with *@bad the partition. */
static int consume_start(sf_consumer_t *cons, const char *topic, part_state_t *parts,
                         size_t nparts, const consume_start_t *st, size_t *ndone,
                         int32_t *bad) {
    int err;

    for (size_t i = 0; i < nparts && (st->relative || st->to_end); i++) {
        part_state_t *ps = &parts[i];
        *bad = ps->id;
        err = sf_consumer_watermarks(cons, topic, ps->id, &ps->low, &ps->end, st->timeout_ms);
        if (err)
            return err;
    }
    for (size_t i = 0; i < nparts; i++) {
        part_state_t *ps = &parts[i];
        if (st->by_time)
            ps->start = SF_OFFSET_END; /* then seek_timestamp below */
        else if (st->relative)
            ps->start = ps->end - st->relative > ps->low ? ps->end - st->relative : ps->low;
        else
            ps->start = st->offset;
        *bad = ps->id;
        err = sf_consumer_assign(cons, topic, ps->id, ps->start);
        if (err)
            return err;
    }
    for (size_t i = 0; i < nparts; i++) {
        part_state_t *ps = &parts[i];
        int64_t pos = ps->start;
        *bad = ps->id;
        if (st->by_time) {
            err = sf_consumer_seek_timestamp(cons, topic, ps->id, st->ts_ms, st->timeout_ms);
            if (!err && st->to_end)
                err = sf_consumer_position(cons, topic, ps->id, &pos, st->timeout_ms);
            if (err)
                return err;
        } else if (pos == SF_OFFSET_BEGINNING) {
            pos = ps->low;
        } else if (pos == SF_OFFSET_END) {
            pos = ps->end;
        }
        if (st->to_end && pos >= ps->end) { /* nothing to read */
            ps->done = 1;
            (*ndone)++;
            sf_consumer_unassign(cons, topic, ps->id);
        }
    }
    return 0;
}

static struct {
    _Atomic(sf_consumer_t *) c;
    atomic_int stop;
} consume_sig;

static void consume_on_signal(int sig, void *arg) {
    sf_consumer_t *c;
    (void)sig;
    (void)arg;
    atomic_store(&consume_sig.stop, 1);
    c = atomic_load(&consume_sig.c);
    if (c)
        sf_consumer_wakeup(c);
}

/* The consumer of --group GROUP, subscribed to @topic (a name or a ^pattern). Returns an exit
 * code; on success *@conf and *@cons are set (the caller destroys them). */
static int consume_group_start(sf_cli_t *cli, const char *group, const char *topic,
                               int from_beginning, const char *isolation, sf_conf_t **conf,
                               sf_consumer_t **cons) {
    char errstr[512];
    int err;

    if (!(*conf = sf_cli_conf(cli)) ||
        sf_clidata_conf_set(cli, *conf, "--group", "group.id", group) < 0 ||
        (isolation &&
         sf_clidata_conf_set(cli, *conf, "--isolation-level", "isolation.level", isolation) < 0) ||
        (from_beginning &&
         sf_clidata_conf_set(cli, *conf, "--from-beginning", "auto.offset.reset", "earliest") <
             0))
        return SF_CLI_EXIT_USAGE;
    errstr[0] = '\0';
    if (!(*cons = sf_consumer_new(*conf, errstr, sizeof(errstr)))) {
        sf_cli_error(cli, "cannot create a consumer: %s", errstr[0] ? errstr : "out of memory");
        return SF_CLI_EXIT_USAGE;
    }
    if ((err = sf_consumer_subscribe(*cons, &topic, 1)) != SF_OK) {
        if (err == SF_ERROR_INVALID) {
            sf_cli_error(cli, "'%s' is not a valid topic or regular expression", topic);
            return SF_CLI_EXIT_USAGE;
        }
        return sf_cli_fail(cli, "subscribing", err);
    }
    return SF_CLI_EXIT_OK;
}

static part_state_t *find_part(part_state_t *parts, size_t n, int32_t id) {
    for (size_t i = 0; i < n; i++)
        if (parts[i].id == id)
            return &parts[i];
    return NULL;
}

/* --to-end: the partitions whose position passed the end without a record at its last
 * offset (a transaction marker or an aborted transaction's records are last) are done.
 * Returns how many became done. */
static size_t ends_passed(sf_consumer_t *cons, const char *topic, part_state_t *parts,
                          size_t nparts) {
    size_t i, n = 0;
    for (i = 0; i < nparts; i++) {
        int64_t pos;
        if (parts[i].done || sf_consumer_position(cons, topic, parts[i].id, &pos, 0) != SF_OK ||
            pos < parts[i].end)
            continue;
        parts[i].done = 1;
        n++;
        sf_consumer_unassign(cons, topic, parts[i].id);
    }
    return n;
}

int sf_cmd_consume(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] = {
        SF_CLI_LONGOPTS,
        {"partition", required_argument, NULL, OPT_PARTITION},
        {"from-beginning", no_argument, NULL, OPT_FROM_BEGINNING},
        {"offset", required_argument, NULL, OPT_OFFSET},
        {"from-timestamp", required_argument, NULL, OPT_FROM_TS},
        {"max-messages", required_argument, NULL, OPT_MAX_MESSAGES},
        {"timeout-ms", required_argument, NULL, OPT_TIMEOUT_MS},
        {"to-end", no_argument, NULL, OPT_TO_END},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"print-key", no_argument, NULL, OPT_PRINT_KEY},
        {"print-headers", no_argument, NULL, OPT_PRINT_HEADERS},
        {"print-offset", no_argument, NULL, OPT_PRINT_OFFSET},
        {"print-partition", no_argument, NULL, OPT_PRINT_PARTITION},
        {"print-timestamp", no_argument, NULL, OPT_PRINT_TIMESTAMP},
        {"key-separator", required_argument, NULL, OPT_KEYSEP},
        {"quiet", no_argument, NULL, 'q'},
        {"group", required_argument, NULL, OPT_GROUP},
        {"isolation-level", required_argument, NULL, OPT_ISOLATION},
        {NULL, 0, NULL, 0}};
    int32_t want[1024];
    size_t nwant = 0, nparts = 0, ndone = 0;
    part_state_t *parts = NULL;
    const char *topic, *format = NULL, *offset_arg = NULL, *ts_arg = NULL, *group = NULL;
    const char *isolation = NULL;
    char keysep[64] = "\t";
    int from_beginning = 0, to_end = 0, quiet = 0, rc = SF_CLI_EXIT_USAGE, c, err;
    int pr_key = 0, pr_hdrs = 0, pr_off = 0, pr_part = 0, pr_ts = 0, starts = 0;
    long long max_messages = -1, idle_ms = -1, v;
    int64_t start_offset = SF_OFFSET_END, ts_ms = 0, relative = 0, last_activity;
    long long count = 0;
    fmt_t fmt;
    sf_conf_t *conf = NULL;
    sf_admin_t *admin = NULL;
    sf_consumer_t *cons = NULL;
    sf_cluster_info_t *info = NULL;
    char errstr[512];
    int sig_started = 0;

    memset(&fmt, 0, sizeof(fmt));
    optind = 0;
    while ((c = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS "q", longopts)) != -1) {
        switch (c) {
        case 'h':
            fputs(consume_usage, stdout);
            sf_cli_print_common_options(stdout);
            rc = SF_CLI_EXIT_OK;
            goto out;
        case OPT_PARTITION:
            if (sf_cli_parse_int(cli, "--partition", optarg, 0, INT32_MAX, &v) < 0)
                goto out;
            if (nwant == sizeof(want) / sizeof(want[0])) {
                sf_cli_error(cli, "too many --partition options");
                goto out;
            }
            want[nwant++] = (int32_t)v;
            break;
        case OPT_FROM_BEGINNING: from_beginning = 1; starts++; break;
        case OPT_OFFSET: offset_arg = optarg; starts++; break;
        case OPT_FROM_TS: ts_arg = optarg; starts++; break;
        case OPT_MAX_MESSAGES:
            if (sf_cli_parse_int(cli, "--max-messages", optarg, 1, LLONG_MAX, &max_messages) < 0)
                goto out;
            break;
        case OPT_TIMEOUT_MS:
            if (sf_cli_parse_int(cli, "--timeout-ms", optarg, 0, INT_MAX, &idle_ms) < 0)
                goto out;
            break;
        case OPT_TO_END: to_end = 1; break;
        case OPT_FORMAT: format = optarg; break;
        case OPT_PRINT_KEY: pr_key = 1; break;
        case OPT_PRINT_HEADERS: pr_hdrs = 1; break;
        case OPT_PRINT_OFFSET: pr_off = 1; break;
        case OPT_PRINT_PARTITION: pr_part = 1; break;
        case OPT_PRINT_TIMESTAMP: pr_ts = 1; break;
        case OPT_KEYSEP: sf_clidata_unescape(optarg, keysep, sizeof(keysep)); break;
        case 'q': quiet = 1; break;
        case OPT_GROUP: group = optarg; break;
        case OPT_ISOLATION: isolation = optarg; break;
        default:
            goto out;
        }
    }
    if (!(topic = sf_clidata_topic_arg(cli, argc, argv)))
        goto out;
    if (starts > 1) {
        sf_cli_error(cli, "give only one of --from-beginning, --offset and --from-timestamp");
        goto out;
    }
    if (group && (nwant || offset_arg || ts_arg || to_end)) {
        sf_cli_error(cli, "--group takes the partitions and offsets from the group: "
                          "--partition, --offset, --from-timestamp and --to-end do not apply");
        goto out;
    }
    if (from_beginning)
        start_offset = SF_OFFSET_BEGINNING;
    if (offset_arg) {
        if (!strcmp(offset_arg, "beginning") || !strcmp(offset_arg, "earliest")) {
            start_offset = SF_OFFSET_BEGINNING;
        } else if (!strcmp(offset_arg, "end") || !strcmp(offset_arg, "latest")) {
            start_offset = SF_OFFSET_END;
        } else {
            if (sf_cli_parse_int(cli, "--offset", offset_arg, -INT64_MAX, INT64_MAX, &v) < 0)
                goto out;
            if (v < 0) {
                relative = -v;
                start_offset = SF_OFFSET_END;
            } else {
                start_offset = v;
            }
        }
    }
    if (ts_arg && sf_clidata_parse_timestamp(ts_arg, &ts_ms) < 0) {
        sf_cli_error(cli, "invalid --from-timestamp '%s': expected milliseconds since the "
                          "epoch or ISO 8601 (e.g. 2024-05-01T12:00:00Z)", ts_arg);
        goto out;
    }
    if (format && (pr_key || pr_hdrs || pr_off || pr_part || pr_ts)) {
        sf_cli_error(cli, "--format and the --print-* options exclude each other");
        goto out;
    }
    if (cli->json && (format || pr_key || pr_hdrs || pr_off || pr_part || pr_ts)) {
        sf_cli_error(cli, "--output json and --format/--print-* exclude each other");
        goto out;
    }
    if (format) {
        if (fmt_compile(cli, &fmt, format) < 0)
            goto out;
    } else if (pr_key || pr_hdrs || pr_off || pr_part || pr_ts) {
        if (fmt_kafka(cli, &fmt, keysep, pr_ts, pr_part, pr_off, pr_hdrs, pr_key) < 0)
            goto out;
    } else if (fmt_compile(cli, &fmt, "%v\\n") < 0) {
        goto out;
    }

    /* Signals go to a thread of their own that wakes the poll up; every thread started from
     * here on inherits the blocked mask. */
    atomic_store(&consume_sig.stop, 0);
    atomic_store(&consume_sig.c, NULL);
    if (sf_clidata_sigthread_start(consume_on_signal, NULL) < 0) {
        sf_cli_error(cli, "cannot start the signal thread: %s", strerror(errno));
        rc = SF_CLI_EXIT_FAIL;
        goto out;
    }
    sig_started = 1;

    if (group) {
        rc = consume_group_start(cli, group, topic, from_beginning, isolation, &conf, &cons);
        if (rc != SF_CLI_EXIT_OK)
            goto out;
        atomic_store(&consume_sig.c, cons);
        goto poll;
    }

    /* The partitions. */
    rc = SF_CLI_EXIT_USAGE;
    if (!(admin = sf_cli_admin(cli)))
        goto out;
    err = sf_admin_describe_cluster(admin, &topic, 1, cli->timeout_ms, &info);
    if (err) {
        rc = sf_cli_fail(cli, "reading the topic's partitions", err);
        goto out;
    }
    sf_admin_destroy(admin);
    admin = NULL;
    if (info->topic_count != 1 || strcmp(info->topics[0].name, topic) != 0) {
        sf_cli_error(cli, "the broker did not describe topic '%s'", topic);
        rc = SF_CLI_EXIT_FAIL;
        goto out;
    }
    if (info->topics[0].err) {
        char what[300];
        snprintf(what, sizeof(what), "topic '%s'", topic);
        rc = sf_cli_fail(cli, what, info->topics[0].err);
        goto out;
    }
    {
        const sf_topic_info_t *ti = &info->topics[0];
        size_t n = nwant ? nwant : ti->partition_count;
        parts = calloc(n ? n : 1, sizeof(*parts));
        if (!parts) {
            sf_cli_error(cli, "out of memory");
            rc = SF_CLI_EXIT_FAIL;
            goto out;
        }
        for (size_t i = 0; i < n; i++) {
            int32_t id = nwant ? want[i] : ti->partitions[i].id;
            int found = 0;
            for (size_t j = 0; j < ti->partition_count; j++)
                found |= ti->partitions[j].id == id;
            if (!found) {
                sf_cli_error(cli, "topic '%s' has no partition %d (it has %zu)", topic, (int)id,
                             ti->partition_count);
                rc = SF_CLI_EXIT_FAIL;
                goto out;
            }
            if (find_part(parts, nparts, id))
                continue; /* given twice */
            parts[nparts++].id = id;
        }
        if (nparts == 0) {
            sf_cli_error(cli, "topic '%s' has no partitions", topic);
            rc = SF_CLI_EXIT_FAIL;
            goto out;
        }
    }

    /* The consumer and where it starts. The default fetch.max.wait.ms (500) is shortened
     * (unless configured) for the lookups that follow the assignment (consume_start). */
    if (!(conf = sf_cli_conf(cli)))
        goto out;
    if (sf_clidata_conf_soft(cli, conf, "fetch.max.wait.ms", "500", "100") < 0 ||
        (isolation &&
         sf_clidata_conf_set(cli, conf, "--isolation-level", "isolation.level", isolation) < 0))
        goto out;
    errstr[0] = '\0';
    cons = sf_consumer_new(conf, errstr, sizeof(errstr));
    if (!cons) {
        sf_cli_error(cli, "cannot create a consumer: %s", errstr[0] ? errstr : "out of memory");
        goto out;
    }
    atomic_store(&consume_sig.c, cons);
    {
        consume_start_t st = {ts_arg != NULL, ts_ms, relative, start_offset, to_end,
                              cli->timeout_ms};
        int32_t bad = -1;
        err = consume_start(cons, topic, parts, nparts, &st, &ndone, &bad);
        if (err) {
            char what[320];
            snprintf(what, sizeof(what), "%s [%d]", topic, (int)bad);
            rc = sf_cli_fail(cli, what, err);
            goto out;
        }
    }

    /* Poll and print. Output is flushed whenever no record is waiting, so that a slow topic
     * shows up at once while a fast one is written in large blocks. */
poll:
    rc = SF_CLI_EXIT_OK;
    last_activity = sf_clidata_now_ns();
    while (!atomic_load(&consume_sig.stop) && (group || ndone < nparts) &&
           (max_messages < 0 || count < max_messages)) {
        sf_message_t *m = sf_consumer_poll(cons, 0);
        part_state_t *ps;

        if (!m) {
            int wait = 1000;
            fflush(stdout);
            if (to_end)
                ndone += ends_passed(cons, topic, parts, nparts);
            if (idle_ms >= 0) {
                int64_t left = idle_ms - (sf_clidata_now_ns() - last_activity) / 1000000;
                if (left <= 0)
                    break;
                if (left < wait)
                    wait = (int)left;
            }
            m = sf_consumer_poll(cons, wait);
            if (!m)
                continue;
        }
        ps = find_part(parts, nparts, m->partition);
        if (m->err && group) {
            char what[320];
            if (m->partition < 0)
                snprintf(what, sizeof(what), "group '%s'", group);
            else
                snprintf(what, sizeof(what), "%s [%d]", m->topic, (int)m->partition);
            sf_cli_fail(cli, what, m->err);
            sf_message_destroy(m);
            continue;
        }
        if (m->err) {
            if (ps && !ps->done && m->err != ps->last_err) {
                char what[320];
                snprintf(what, sizeof(what), "%s [%d]", topic, (int)m->partition);
                sf_cli_fail(cli, what, m->err);
                ps->last_err = m->err;
                if (!sf_error_retriable(m->err)) {
                    ps->done = 1;
                    ndone++;
                    sf_consumer_unassign(cons, topic, ps->id);
                    rc = SF_CLI_EXIT_FAIL;
                }
            }
            sf_message_destroy(m);
            continue;
        }
        if (!group && (!ps || ps->done)) { /* past --to-end's end, or unassigned meanwhile */
            sf_message_destroy(m);
            continue;
        }
        if (ps)
            ps->last_err = 0;
        last_activity = sf_clidata_now_ns();
        if (!to_end || m->offset < ps->end) {
            if (cli->json)
                json_print_message(m, stdout);
            else
                fmt_print(&fmt, m, stdout);
            count++;
        }
        if (to_end && m->offset >= ps->end - 1) {
            ps->done = 1;
            ndone++;
            sf_consumer_unassign(cons, topic, ps->id);
        }
        sf_message_destroy(m);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        sf_cli_error(cli, "writing standard output: %s", strerror(errno));
        rc = SF_CLI_EXIT_FAIL;
    }
    if (!quiet)
        fprintf(stderr, "Processed a total of %lld messages\n", count);

out:
    /* The signal thread goes first: it may be about to wake the consumer up. */
    if (sig_started)
        sf_clidata_sigthread_stop();
    if (cons)
        sf_consumer_destroy(cons);
    if (admin)
        sf_admin_destroy(admin);
    if (info)
        sf_cluster_info_destroy(info);
    if (conf)
        sf_conf_destroy(conf);
    free(parts);
    free(fmt.text);
    return rc;
}
