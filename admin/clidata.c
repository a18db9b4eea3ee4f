/* Helpers shared by the data sub-commands (see clidata.h), and the topic config helpers of
 * the administration sub-commands (see cmdutil.h). */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clidata.h"

/* Kafka error codes the topic config helpers tell apart. */
#define CLIDATA_KERR_UNKNOWN_TOPIC_OR_PARTITION 3
#define CLIDATA_KERR_INVALID_CONFIG 40

sf_config_kv_t *sf_cli_kvs_new(const sf_cli_t *cli, int argc) {
    sf_config_kv_t *kvs = calloc((size_t)argc + 1, sizeof *kvs);

    if (kvs == NULL)
        sf_cli_error(cli, "out of memory");
    return kvs;
}

int sf_cli_parse_delete(const sf_cli_t *cli, const char *option, char *s, sf_config_kv_t *kv) {
    if (s[0] == '\0' || strchr(s, '=') != NULL) {
        sf_cli_error(cli, "invalid %s '%s': expected a config name (e.g. retention.ms)", option,
                     s);
        return -1;
    }
    kv->name = s;
    kv->value = NULL;
    return 0;
}

int sf_cli_topic_missing(const sf_cli_t *cli, const char *topic, const char *hint) {
    sf_cli_error(cli, "topic '%s' does not exist (UNKNOWN_TOPIC_OR_PARTITION); %s", topic,
                 hint);
    return SF_CLI_EXIT_FAIL;
}

int sf_cli_alter_topic_configs(const sf_cli_t *cli, sf_admin_t *a, const char *topic,
                               const sf_config_kv_t *kvs, size_t n, json_t **set,
                               json_t **del) {
    char errstr[512], what[300];
    size_t k;
    int rc;

    *set = NULL;
    *del = NULL;
    rc = sf_admin_alter_configs(a, topic, kvs, n, cli->timeout_ms, errstr, sizeof errstr);
    if (rc == CLIDATA_KERR_UNKNOWN_TOPIC_OR_PARTITION)
        return sf_cli_topic_missing(cli, topic, "see 'streamflow topic list'");
    if (rc != 0) {
        snprintf(what, sizeof what, "changing the configs of topic '%s'", topic);
        return sf_cli_fail_msg(cli, what, rc, errstr,
                               rc == CLIDATA_KERR_INVALID_CONFIG
                                   ? "check the config names and values (see "
                                     "'streamflow config get --topic NAME')"
                               : rc == SF_ERROR_UNSUPPORTED
                                   ? "the broker does not support IncrementalAlterConfigs "
                                     "(Kafka API 44)"
                                   : NULL);
    }
    if (cli->json) {
        *set = json_object();
        *del = json_array();
        for (k = 0; k < n; k++) {
            if (kvs[k].value != NULL)
                json_object_set_new(*set, kvs[k].name, json_string(kvs[k].value));
            else
                json_array_append_new(*del, json_string(kvs[k].name));
        }
    } else {
        for (k = 0; k < n; k++) {
            if (kvs[k].value != NULL)
                printf("Set %s=%s on topic %s.\n", kvs[k].name, kvs[k].value, topic);
            else
                printf("Removed %s from topic %s.\n", kvs[k].name, topic);
        }
    }
    return SF_CLI_EXIT_OK;
}

int sf_clidata_headers_add(const sf_cli_t *cli, sf_clidata_headers_t *h, const char *kv) {
    const char *eq = strchr(kv, '=');
    char *key;

    if (!eq || eq == kv) {
        sf_cli_error(cli, "--header %s: expected KEY=VALUE", kv);
        return -1;
    }
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 8;
        sf_header_t *v = realloc(h->v, cap * sizeof(*v));
        if (!v)
            goto nomem;
        h->v = v;
        h->cap = cap;
    }
    key = strndup(kv, (size_t)(eq - kv));
    if (!key)
        goto nomem;
    h->v[h->n].key = key;
    h->v[h->n].value = eq + 1;
    h->v[h->n].value_len = strlen(eq + 1);
    h->n++;
    return 0;
nomem:
    sf_cli_error(cli, "out of memory");
    return -1;
}

void sf_clidata_headers_free(sf_clidata_headers_t *h) {
    for (size_t i = 0; i < h->n; i++)
        free((char *)h->v[i].key);
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}

const char *sf_clidata_topic_arg(const sf_cli_t *cli, int argc, char **argv) {
    if (argc - optind != 1) {
        sf_cli_error(cli, argc - optind < 1 ? "missing TOPIC; see '%s --help'"
                                            : "expected one TOPIC; see '%s --help'",
                     cli->prog);
        return NULL;
    }
    return argv[optind];
}

size_t sf_clidata_unescape(const char *s, char *out, size_t size) {
    size_t o = 0;

    for (; *s && o + 1 < size; s++) {
        if (s[0] == '\\' && (s[1] == 't' || s[1] == '\\')) {
            out[o++] = s[1] == 't' ? '\t' : '\\';
            s++;
        } else {
            out[o++] = *s;
        }
    }
    out[o] = '\0';
    return o;
}

int sf_clidata_conf_set(const sf_cli_t *cli, sf_conf_t *conf, const char *option,
                        const char *key, const char *value) {
    char errstr[512];

    errstr[0] = '\0';
    if (sf_conf_set(conf, key, value, errstr, sizeof(errstr)) == SF_OK)
        return 0;
    sf_cli_error(cli, "%s %s: %s", option, value, errstr[0] ? errstr : "invalid value");
    return -1;
}

int sf_clidata_conf_soft(const sf_cli_t *cli, sf_conf_t *conf, const char *key,
                         const char *dflt, const char *value) {
    const char *cur = sf_conf_get(conf, key);

    if (cur && strcmp(cur, dflt) != 0)
        return 0;
    return sf_clidata_conf_set(cli, conf, key, key, value);
}

int sf_clidata_conf_block(const sf_cli_t *cli, sf_conf_t *conf) {
    char v[16];

    snprintf(v, sizeof(v), "%d", cli->timeout_ms);
    return sf_clidata_conf_soft(cli, conf, "max.block.ms", "60000", v);
}

int sf_clidata_prodopts_apply(const sf_cli_t *cli, sf_conf_t *conf,
                              const sf_clidata_prodopts_t *po) {
    if (po->acks && sf_clidata_conf_set(cli, conf, "--acks", "acks", po->acks) < 0)
        return -1;
    if (po->compression &&
        sf_clidata_conf_set(cli, conf, "--compression", "compression.type", po->compression) < 0)
        return -1;
    if (po->linger_ms &&
        sf_clidata_conf_set(cli, conf, "--linger-ms", "linger.ms", po->linger_ms) < 0)
        return -1;
    if (po->batch_size &&
        sf_clidata_conf_set(cli, conf, "--batch-size", "batch.size", po->batch_size) < 0)
        return -1;
    return 0;
}

int64_t sf_clidata_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- histogram -------------------------------------------------------------------------- */

#define HIST_EXACT 128 /* values below are counted exactly */
#define HIST_SUB 64    /* buckets per power of two above */
#define HIST_BUCKETS (HIST_EXACT + (63 - 7 + 1) * HIST_SUB)

struct sf_clidata_hist {
    uint64_t count;
    double sum;
    int64_t max;
    uint64_t bucket[HIST_BUCKETS];
};

sf_clidata_hist_t *sf_clidata_hist_new(void) {
    return calloc(1, sizeof(sf_clidata_hist_t));
}

void sf_clidata_hist_free(sf_clidata_hist_t *h) {
    free(h);
}

static size_t hist_index(uint64_t v) {
    int e, shift;

    if (v < HIST_EXACT)
        return (size_t)v;
    e = 63 - __builtin_clzll(v); /* >= 7 */
    shift = e - 6;
    return HIST_EXACT + (size_t)(e - 7) * HIST_SUB + (size_t)((v >> shift) - HIST_SUB);
}

/* The smallest value of bucket @i and the bucket's width. */
static void hist_bucket(size_t i, uint64_t *low, uint64_t *width) {
    size_t k;
    int shift;

    if (i < HIST_EXACT) {
        *low = i;
        *width = 1;
        return;
    }
    k = i - HIST_EXACT;
    shift = (int)(k / HIST_SUB) + 1;
    *low = (uint64_t)(k % HIST_SUB + HIST_SUB) << shift;
    *width = (uint64_t)1 << shift;
}

void sf_clidata_hist_add(sf_clidata_hist_t *h, int64_t us) {
    if (us < 0)
        us = 0;
    h->bucket[hist_index((uint64_t)us)]++;
    h->count++;
    h->sum += (double)us;
    if (us > h->max)
        h->max = us;
}

uint64_t sf_clidata_hist_count(const sf_clidata_hist_t *h) {
    return h->count;
}

double sf_clidata_hist_quantile(const sf_clidata_hist_t *h, double q) {
    uint64_t rank, seen = 0, low, width;
    double v;

    if (h->count == 0)
        return 0;
    if (q < 0)
        q = 0;
    if (q > 1)
        q = 1;
    rank = (uint64_t)(q * (double)h->count + 0.999999);
    if (rank < 1)
        rank = 1;
    for (size_t i = 0; i < HIST_BUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= rank) {
            hist_bucket(i, &low, &width);
            v = (double)low + (double)(width - 1) / 2.0;
            return v > (double)h->max ? (double)h->max : v;
        }
    }
    return (double)h->max;
}

double sf_clidata_hist_mean(const sf_clidata_hist_t *h) {
    return h->count ? h->sum / (double)h->count : 0;
}

int64_t sf_clidata_hist_max(const sf_clidata_hist_t *h) {
    return h->max;
}

/* ---- signals ---------------------------------------------------------------------------- */

static struct {
    pthread_t thread;
    int running;
    void (*cb)(int sig, void *arg);
    void *arg;
    sigset_t set;
    volatile sig_atomic_t stopping;
} sigthr;

/* SIGUSR2 (also blocked, also waited for) tells the thread to return: no cancellation. */
static void *sigthr_main(void *unused) {
    (void)unused;
    for (;;) {
        int sig = 0;
        if (sigwait(&sigthr.set, &sig) != 0)
            continue;
        if (sig == SIGUSR2) {
            if (sigthr.stopping)
                return NULL;
            continue;
        }
        sigthr.cb(sig, sigthr.arg);
    }
}

int sf_clidata_sigthread_start(void (*cb)(int sig, void *arg), void *arg) {
    int err;

    if (sigthr.running) {
        errno = EBUSY;
        return -1;
    }
    sigemptyset(&sigthr.set);
    sigaddset(&sigthr.set, SIGINT);
    sigaddset(&sigthr.set, SIGTERM);
    sigaddset(&sigthr.set, SIGUSR2);
    sigthr.cb = cb;
    sigthr.arg = arg;
    sigthr.stopping = 0;
    err = pthread_sigmask(SIG_BLOCK, &sigthr.set, NULL);
    if (!err)
        err = pthread_create(&sigthr.thread, NULL, sigthr_main, NULL);
    if (err) {
        errno = err;
        return -1;
    }
    sigthr.running = 1;
    return 0;
}

void sf_clidata_sigthread_stop(void) {
    if (!sigthr.running)
        return;
    /* The signals stay blocked: unblocking now would let a second Ctrl-C that is already
     * pending kill the process before it has printed its summary. */
    sigthr.stopping = 1;
    pthread_kill(sigthr.thread, SIGUSR2);
    pthread_join(sigthr.thread, NULL);
    sigthr.running = 0;
}

int sf_clidata_progress_enabled(void) {
    return isatty(STDERR_FILENO);
}

/* ---- timestamps ---------------------------------------------------------------------- */

/* The value of the two decimal digits at @p, or -1 when they are not two digits. */
static int two_digits(const char *p) {
    if (p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9')
        return -1;
    return (p[0] - '0') * 10 + (p[1] - '0');
}

int sf_clidata_parse_timestamp(const char *s, int64_t *ms) {
    struct tm tm;
    const char *p;
    int64_t frac = 0, secs;
    int have_zone = 0, zone_s = 0;
    char *end;

    if (*s && strspn(s, "0123456789") == strlen(s)) {
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno)
            return -1;
        *ms = v;
        return 0;
    }
    memset(&tm, 0, sizeof(tm));
    p = strptime(s, "%Y-%m-%d", &tm);
    if (!p)
        return -1;
    if (*p == 'T' || *p == ' ') {
        const char *q = strptime(p + 1, "%H:%M", &tm);
        if (!q)
            return -1;
        p = q;
        if (*p == ':') {
            q = strptime(p + 1, "%S", &tm);
            if (!q)
                return -1;
            p = q;
            if (*p == '.' || *p == ',') {
                int digits = 0;
                p++;
                while (*p >= '0' && *p <= '9') {
                    if (digits < 3) {
                        frac = frac * 10 + (*p - '0');
                        digits++;
                    }
                    p++;
                }
                if (digits == 0)
                    return -1;
                while (digits++ < 3)
                    frac *= 10;
            }
        }
    }
    if (*p == 'Z') {
        have_zone = 1;
        p++;
    } else if (*p == '+' || *p == '-') {
        /* +HH, +HHMM or +HH:MM: exactly two digits each, HH up to 23, MM up to 59. */
        int sign = *p == '-' ? -1 : 1, hh, mm = 0;
        if ((hh = two_digits(p + 1)) < 0 || hh > 23)
            return -1;
        p += 3;
        if (*p) {
            if (*p == ':')
                p++;
            if ((mm = two_digits(p)) < 0 || mm > 59)
                return -1;
            p += 2;
        }
        have_zone = 1;
        zone_s = sign * (hh * 3600 + mm * 60);
    }
    if (*p)
        return -1;
    if (have_zone) {
        secs = (int64_t)timegm(&tm) - zone_s;
    } else {
        tm.tm_isdst = -1;
        secs = (int64_t)mktime(&tm);
    }
    *ms = secs * 1000 + frac;
    return 0;
}
