/* streamflow perf produce|consume|e2e: throughput and latency measurements, in the manner
 * of kafka-producer-perf-test and kafka-consumer-perf-test. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clidata.h"

static const char perf_produce_usage[] =
    "Usage: streamflow perf produce TOPIC --records N [OPTIONS]\n"
    "\n"
    "Send N records of --record-size bytes (one payload of random letters, null keys) as\n"
    "fast as possible or at --throughput, wait for every outcome, and print records/s,\n"
    "MB/s (MiB) and the latency from send to acknowledgement: average, 50th, 95th, 99th and\n"
    "99.9th percentiles and maximum. On a terminal a progress line is updated every second.\n"
    "\n"
    "Options:\n"
    "  --records N            how many records (required)\n"
    "  --record-size BYTES    value size (default 100)\n"
    "  --throughput R         at most R records/s (default -1: unlimited)\n"
    "  --warmup-records N     send N records first, not measured, and wait for them (the\n"
    "                         connection and the topic's metadata are then in place)\n"
    "  --partition N          send to partition N (default: the partitioner's)\n"
    "  --acks 0|1|all         (default all)\n"
    "  --compression CODEC    none, gzip, snappy, lz4 or zstd (default none)\n"
    "  --linger-ms N          (default 5)\n"
    "  --batch-size BYTES     (default 16384)\n"
    "  --output json          print the summary as JSON\n";

static const char perf_consume_usage[] =
    "Usage: streamflow perf consume TOPIC --records N [OPTIONS]\n"
    "\n"
    "Read N records from the beginning of TOPIC (every partition, or --partition) and print\n"
    "records/s and MB/s (MiB of keys and values). Exits 1 when fewer than N records came\n"
    "before --timeout-ms passed without one.\n"
    "\n"
    "Options:\n"
    "  --records N            how many records (required)\n"
    "  --partition N          read partition N only (default: all)\n"
    "  --timeout-ms N         give up after N ms without a record (default 10000)\n"
    "  --output json          print the summary as JSON\n";

static const char perf_e2e_usage[] =
    "Usage: streamflow perf e2e TOPIC --records N [OPTIONS]\n"
    "\n"
    "End-to-end latency: a producer thread sends N records at --rate records/s, each value\n"
    "starting with its send time; a consumer that started at the end of TOPIC receives them\n"
    "and measures produce-to-consume latency: average, 50th, 95th, 99th and 99.9th\n"
    "percentiles and maximum. Records of other writers are ignored.\n"
    "\n"
    "Options:\n"
    "  --records N            how many records (required)\n"
    "  --rate R               records/s (default 1000; -1: unlimited)\n"
    "  --record-size BYTES    value size, at least 24 (default 100)\n"
    "  --partition N          use partition N only (default: all partitions)\n"
    "  --acks 0|1|all         (default all)\n"
    "  --compression CODEC    (default none)\n"
    "  --linger-ms N          (default 0 here)\n"
    "  --batch-size BYTES     (default 16384)\n"
    "  --timeout-ms N         give up after N ms without a record (default 10000)\n"
    "  --output json          print the summary as JSON\n";

enum {
    OPT_RECORDS = 0x200,
    OPT_RECORD_SIZE,
    OPT_THROUGHPUT,
    OPT_RATE,
    OPT_PARTITION,
    OPT_ACKS,
    OPT_COMPRESSION,
    OPT_LINGER,
    OPT_BATCH,
    OPT_TIMEOUT_MS,
    OPT_WARMUP
};

enum { PERF_PRODUCE = 1, PERF_CONSUME = 2, PERF_E2E = 4 };

typedef struct perf_opts {
    int mode;
    const char *topic;
    long long records;
    long long record_size;
    long long throughput; /* produce: records/s, -1 unlimited */
    long long rate;       /* e2e: records/s, -1 unlimited */
    long long partition;  /* -1: all / partitioner */
    long long timeout_ms; /* consume, e2e: idle limit */
    long long warmup;     /* produce: records sent before the measurement */
    sf_clidata_prodopts_t po;
} perf_opts_t;

/* State shared with the signal thread. */
static struct {
    atomic_int stop;
    _Atomic(sf_consumer_t *) consumer;
} perf_sig;

static void perf_on_signal(int sig, void *arg) {
    sf_consumer_t *c;
    (void)sig;
    (void)arg;
    atomic_store(&perf_sig.stop, 1);
    c = atomic_load(&perf_sig.consumer);
    if (c)
        sf_consumer_wakeup(c);
}

/* ---- output ----------------------------------------------------------------------------- */

static int perf_progress_on;

/* A progress line on standard error (a terminal), rewritten in place. */
static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...) {
    va_list ap;

    if (!perf_progress_on)
        return;
    fputc('\r', stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\033[K", stderr);
    fflush(stderr);
}

static void progress_clear(void) {
    if (perf_progress_on) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
}

/* A JSON number rounded to 3 decimals (milliseconds to the microsecond). */
static json_t *num(double v) {
    return json_real(round(v * 1000.0) / 1000.0);
}

/* Print the summary @j (stolen): indented, reals with no more digits than they carry. */
static void summary_print(json_t *j) {
    if (!j)
        return;
    json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    fputc('\n', stdout);
    fflush(stdout);
    json_decref(j);
}

static double mib(double bytes) {
    return bytes / 1048576.0;
}

/* The latency figures of @h (microseconds) in milliseconds, as text on @out. */
static void latency_text(FILE *out, const sf_clidata_hist_t *h) {
    fprintf(out, "%.2f ms avg latency, %.2f ms max latency, %.2f ms 50th, %.2f ms 95th, "
                 "%.2f ms 99th, %.2f ms 99.9th",
            sf_clidata_hist_mean(h) / 1000.0, (double)sf_clidata_hist_max(h) / 1000.0,
            sf_clidata_hist_quantile(h, 0.50) / 1000.0, sf_clidata_hist_quantile(h, 0.95) / 1000.0,
            sf_clidata_hist_quantile(h, 0.99) / 1000.0,
            sf_clidata_hist_quantile(h, 0.999) / 1000.0);
}

static void latency_json(json_t *j, const sf_clidata_hist_t *h) {
    json_object_set_new(j, "latency_avg_ms", num(sf_clidata_hist_mean(h) / 1000.0));
    json_object_set_new(j, "latency_p50_ms", num(sf_clidata_hist_quantile(h, 0.50) / 1000.0));
    json_object_set_new(j, "latency_p95_ms", num(sf_clidata_hist_quantile(h, 0.95) / 1000.0));
    json_object_set_new(j, "latency_p99_ms", num(sf_clidata_hist_quantile(h, 0.99) / 1000.0));
    json_object_set_new(j, "latency_p999_ms",
                        num(sf_clidata_hist_quantile(h, 0.999) / 1000.0));
    json_object_set_new(j, "latency_max_ms", num((double)sf_clidata_hist_max(h) / 1000.0));
}

static json_t *summary_json(const char *test, const perf_opts_t *o, long long records,
                            double seconds, double bytes) {
    json_t *j = json_object();

    if (!j)
        return NULL;
    json_object_set_new(j, "test", json_string(test));
    json_object_set_new(j, "topic", json_string(o->topic));
    json_object_set_new(j, "records", json_integer(records));
    json_object_set_new(j, "seconds", json_real(round(seconds * 1e6) / 1e6));
    json_object_set_new(j, "records_per_sec", num(seconds > 0 ? records / seconds : 0));
    json_object_set_new(j, "mb_per_sec", num(seconds > 0 ? mib(bytes) / seconds : 0));
    return j;
}

/* Fill @buf with letters A-Z (a fixed pseudo-random sequence). */
static void fill_payload(unsigned char *buf, size_t len) {
    uint32_t x = 2463534242u;

    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        buf[i] = (unsigned char)('A' + x % 26);
    }
}

/* All partitions of @topic (or just @only when >= 0) into *@ids. A missing topic is created
 * with the broker's defaults when @create. Returns an exit code. */
static int topic_partitions(sf_cli_t *cli, const char *topic, long long only, int create,
                            int32_t **ids, size_t *n) {
    sf_admin_t *a;
    sf_cluster_info_t *info = NULL;
    int err, rc = SF_CLI_EXIT_FAIL, created = 0;
    int64_t deadline = sf_clidata_now_ns() + (int64_t)cli->timeout_ms * 1000000;
    char what[300], errstr[512];

    *ids = NULL;
    *n = 0;
    snprintf(what, sizeof(what), "topic '%s'", topic);
    if (!(a = sf_cli_admin(cli)))
        return SF_CLI_EXIT_USAGE;
    for (;;) {
        err = sf_admin_describe_cluster(a, &topic, 1, cli->timeout_ms, &info);
        if (err) {
            rc = sf_cli_fail(cli, "reading the topic's partitions", err);
            goto out;
        }
        err = info->topic_count == 1 ? info->topics[0].err : SF_ERROR_NOTFOUND;
        if (err == 0 && info->topics[0].partition_count > 0)
            break;
        if (err == 3 /* UNKNOWN_TOPIC_OR_PARTITION */ && create && !created) {
            errstr[0] = '\0';
            err = sf_admin_create_topic(a, topic, -1, -1, NULL, 0, cli->timeout_ms, errstr,
                                        sizeof(errstr));
            if (err && err != 36 /* TOPIC_ALREADY_EXISTS */) {
                rc = sf_cli_fail_hint(cli, "creating the topic", err, errstr[0] ? errstr : NULL);
                goto out;
            }
            created = 1;
        } else if (err != 0 && !(created && err == 3)) {
            rc = sf_cli_fail(cli, what, err);
            goto out;
        }
        /* A topic just created takes a moment to show its partitions. */
        if (sf_clidata_now_ns() > deadline || atomic_load(&perf_sig.stop)) {
            rc = sf_cli_fail(cli, what, err ? err : SF_ERROR_TIMED_OUT);
            goto out;
        }
        sf_cluster_info_destroy(info);
        info = NULL;
        usleep(100000);
    }
    {
        const sf_topic_info_t *ti = &info->topics[0];
        *ids = calloc(ti->partition_count, sizeof(**ids));
        if (!*ids) {
            sf_cli_error(cli, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < ti->partition_count; i++)
            if (only < 0 || ti->partitions[i].id == only)
                (*ids)[(*n)++] = ti->partitions[i].id;
        if (*n == 0) {
            sf_cli_error(cli, "topic '%s' has no partition %lld (it has %zu)", topic, only,
                         ti->partition_count);
            goto out;
        }
    }
    rc = SF_CLI_EXIT_OK;
out:
    if (info)
        sf_cluster_info_destroy(info);
    sf_admin_destroy(a);
    return rc;
}

/* ---- perf produce ----------------------------------------------------------------------- */

/* Delivery statistics. The callback runs in one thread at a time (the poller thread, then
 * the main thread once the poller has been joined); the counters the progress line reads
 * are atomics with that single writer. */
static struct {
    sf_clidata_hist_t *hist;
    int64_t start_ns;
    atomic_llong acked;
    atomic_llong failed;
    atomic_llong lat_sum_us;
    int first_err;
} prod_st;

static void perf_on_delivery(const sf_delivery_t *d, void *opaque) {
    int64_t sent_us = (int64_t)(intptr_t)opaque;
    int64_t lat_us = (sf_clidata_now_ns() - prod_st.start_ns) / 1000 - sent_us;

    if (d->err) {
        if (atomic_load_explicit(&prod_st.failed, memory_order_relaxed) == 0)
            prod_st.first_err = d->err;
        atomic_store_explicit(&prod_st.failed,
                              atomic_load_explicit(&prod_st.failed, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        return;
    }
    sf_clidata_hist_add(prod_st.hist, lat_us);
    atomic_store_explicit(&prod_st.lat_sum_us,
                          atomic_load_explicit(&prod_st.lat_sum_us, memory_order_relaxed) + lat_us,
                          memory_order_relaxed);
    atomic_store_explicit(&prod_st.acked,
                          atomic_load_explicit(&prod_st.acked, memory_order_relaxed) + 1,
                          memory_order_release);
}

typedef struct poller {
    sf_producer_t *p;
    atomic_int stop;
} poller_t;

static void *poller_main(void *arg) {
    poller_t *pl = arg;
    while (!atomic_load(&pl->stop))
        sf_producer_poll(pl->p, 100);
    return NULL;
}

/* The progress line of perf produce for the window since the last one. */
static void produce_progress(long long sent, int64_t now, int64_t *last_ns, long long *last_acked,
                             long long *last_lat, int record_size) {
    long long acked = atomic_load_explicit(&prod_st.acked, memory_order_acquire);
    long long lat = atomic_load_explicit(&prod_st.lat_sum_us, memory_order_relaxed);
    long long n = acked - *last_acked;
    double secs = (double)(now - *last_ns) / 1e9;
    double rate = secs > 0 ? (double)n / secs : 0;

    progress("%lld records sent, %lld acknowledged, %.1f records/sec (%.2f MB/sec), %.1f ms avg "
             "latency",
             sent, acked, rate, mib(rate * record_size),
             n > 0 ? (double)(lat - *last_lat) / (double)n / 1000.0 : 0.0);
    *last_ns = now;
    *last_acked = acked;
    *last_lat = lat;
}

static int perf_produce(sf_cli_t *cli, const perf_opts_t *o) {
    unsigned char *payload = NULL;
    sf_conf_t *conf = NULL;
    sf_producer_t *p = NULL;
    poller_t pl;
    pthread_t poll_thr;
    int poller_running = 0, rc = SF_CLI_EXIT_FAIL, send_err = 0;
    long long sent = 0, last_acked = 0, last_lat = 0, acked, failed;
    int64_t end_ns, next_progress, last_progress;
    double secs;
    sf_record_t rec;
    char errstr[512];

    memset(&prod_st, 0, sizeof(prod_st));
    prod_st.hist = sf_clidata_hist_new();
    payload = malloc((size_t)o->record_size + 1);
    if (!prod_st.hist || !payload) {
        sf_cli_error(cli, "out of memory");
        goto out;
    }
    fill_payload(payload, (size_t)o->record_size);
    rc = SF_CLI_EXIT_USAGE;
    if (!(conf = sf_cli_conf(cli)) || sf_clidata_prodopts_apply(cli, conf, &o->po) < 0 ||
        sf_clidata_conf_block(cli, conf) < 0)
        goto out;
    errstr[0] = '\0';
    if (!(p = sf_producer_new(conf, errstr, sizeof(errstr)))) {
        sf_cli_error(cli, "cannot create a producer: %s", errstr[0] ? errstr : "out of memory");
        goto out;
    }
    pl.p = p;
    atomic_init(&pl.stop, 0);
    if (pthread_create(&poll_thr, NULL, poller_main, &pl) != 0) {
        sf_cli_error(cli, "cannot start a thread");
        rc = SF_CLI_EXIT_FAIL;
        goto out;
    }
    poller_running = 1;

    memset(&rec, 0, sizeof(rec));
    rec.topic = o->topic;
    rec.partition = (int32_t)o->partition;
    rec.value = payload;
    rec.value_len = (size_t)o->record_size;
    for (long long i = 0; i < o->warmup && !send_err; i++)
        send_err = sf_producer_send(p, &rec, NULL, NULL);
    if (!send_err && o->warmup > 0) {
        /* The poller thread serves nothing here: no callbacks were asked for. */
        while (sf_producer_outstanding(p) > 0 && !atomic_load(&perf_sig.stop))
            sf_producer_flush(p, 200);
    }
    if (send_err) {
        rc = sf_cli_fail(cli, "sending the warm-up records", send_err);
        goto out;
    }
    prod_st.start_ns = sf_clidata_now_ns();
    last_progress = prod_st.start_ns;
    next_progress = prod_st.start_ns + 1000000000;
    for (long long i = 0; i < o->records && !atomic_load_explicit(&perf_sig.stop,
                                                                   memory_order_relaxed); i++) {
        int64_t now = sf_clidata_now_ns();
        int err;

        if (o->throughput > 0) {
            int64_t due = prod_st.start_ns + (int64_t)((double)i * 1e9 / (double)o->throughput);
            if (now < due) {
                struct timespec ts = {(time_t)((due - now) / 1000000000),
                                      (long)((due - now) % 1000000000)};
                nanosleep(&ts, NULL);
                now = sf_clidata_now_ns();
            }
        }
        if (now >= next_progress) {
            produce_progress(sent, now, &last_progress, &last_acked, &last_lat,
                             (int)o->record_size);
            next_progress = now + 1000000000;
        }
        err = sf_producer_send(p, &rec, perf_on_delivery,
                               (void *)(intptr_t)((now - prod_st.start_ns) / 1000));
        if (err) {
            send_err = err;
            break;
        }
        sent++;
    }

    /* Wait for every outcome. The poller goes first so that callbacks run in one thread. */
    atomic_store(&pl.stop, 1);
    pthread_join(poll_thr, NULL);
    poller_running = 0;
    while (sf_producer_outstanding(p) > 0 && sf_producer_flush(p, 200) != SF_OK) {
        int64_t now = sf_clidata_now_ns();
        if (now >= next_progress) {
            produce_progress(sent, now, &last_progress, &last_acked, &last_lat,
                             (int)o->record_size);
            next_progress = now + 1000000000;
        }
    }
    end_ns = sf_clidata_now_ns();
    sf_producer_destroy(p);
    p = NULL;
    progress_clear();

    acked = atomic_load(&prod_st.acked);
    failed = atomic_load(&prod_st.failed);
    secs = (double)(end_ns - prod_st.start_ns) / 1e9;
    if (cli->json) {
        json_t *j = summary_json("produce", o, acked, secs, (double)acked * o->record_size);
        if (j) {
            json_object_set_new(j, "record_size", json_integer(o->record_size));
            json_object_set_new(j, "errors", json_integer(failed));
            latency_json(j, prod_st.hist);
            summary_print(j);
        }
    } else {
        double rate = secs > 0 ? (double)acked / secs : 0.0;
        printf("%lld records sent, %.1f records/sec (%.2f MB/sec), ", acked, rate,
               mib(rate * (double)o->record_size));
        latency_text(stdout, prod_st.hist);
        printf(".\n");
        fflush(stdout);
    }
    rc = SF_CLI_EXIT_OK;
    if (send_err) {
        rc = sf_cli_fail(cli, "sending", send_err);
        if (rc == SF_CLI_EXIT_OK)
            rc = SF_CLI_EXIT_FAIL;
    }
    if (failed) {
        char what[128];
        snprintf(what, sizeof(what), "%lld records not delivered; the first", failed);
        sf_cli_fail(cli, what, prod_st.first_err);
        rc = SF_CLI_EXIT_FAIL;
    }
out:
    if (poller_running) {
        atomic_store(&pl.stop, 1);
        pthread_join(poll_thr, NULL);
    }
    if (p)
        sf_producer_destroy(p);
    if (conf)
        sf_conf_destroy(conf);
    sf_clidata_hist_free(prod_st.hist);
    prod_st.hist = NULL;
    free(payload);
    return rc;
}

/* ---- perf consume ----------------------------------------------------------------------- */

static sf_consumer_t *perf_consumer(sf_cli_t *cli) {
    sf_conf_t *conf = sf_cli_conf(cli);
    sf_consumer_t *c;
    char errstr[512];

    if (!conf)
        return NULL;
    errstr[0] = '\0';
    c = sf_consumer_new(conf, errstr, sizeof(errstr));
    sf_conf_destroy(conf);
    if (!c)
        sf_cli_error(cli, "cannot create a consumer: %s", errstr[0] ? errstr : "out of memory");
    else
        atomic_store(&perf_sig.consumer, c);
    return c;
}

static void perf_consumer_destroy(sf_consumer_t *c) {
    /* The signal thread may hold the pointer: it is stopped before this is called. */
    atomic_store(&perf_sig.consumer, NULL);
    sf_consumer_destroy(c);
}

static int perf_consume(sf_cli_t *cli, const perf_opts_t *o, sf_consumer_t **cp) {
    int32_t *ids = NULL;
    size_t nids = 0;
    sf_consumer_t *c;
    long long count = 0, errors = 0, last_count = 0;
    double bytes = 0, last_bytes = 0;
    int64_t start, now, end, last_msg, next_progress, last_progress;
    int rc, err;

    rc = topic_partitions(cli, o->topic, o->partition, 0, &ids, &nids);
    if (rc)
        return rc;
    if (!(c = *cp = perf_consumer(cli))) {
        free(ids);
        return SF_CLI_EXIT_USAGE;
    }
    for (size_t i = 0; i < nids; i++) {
        err = sf_consumer_assign(c, o->topic, ids[i], SF_OFFSET_BEGINNING);
        if (err) {
            free(ids);
            return sf_cli_fail(cli, "assigning the partitions", err);
        }
    }
    free(ids);
    start = last_msg = last_progress = sf_clidata_now_ns();
    end = start;
    next_progress = start + 1000000000;
    now = start;
    while (count < o->records && !atomic_load_explicit(&perf_sig.stop, memory_order_relaxed)) {
        sf_message_t *m = sf_consumer_poll(c, 200);
        if (m) {
            if (m->err) {
                if (errors++ < 5) {
                    char what[320];
                    snprintf(what, sizeof(what), "%s [%d]", o->topic, (int)m->partition);
                    sf_cli_fail(cli, what, m->err);
                }
            } else {
                count++;
                bytes += (double)(m->key ? m->key_len : 0) + (double)(m->value ? m->value_len : 0);
            }
            sf_message_destroy(m);
            /* The clock is read every 256 records and at the last one. */
            if ((count & 255) != 0 && count < o->records)
                continue;
            now = sf_clidata_now_ns();
            last_msg = end = now;
        } else {
            now = sf_clidata_now_ns();
            if ((now - last_msg) / 1000000 >= o->timeout_ms)
                break;
        }
        if (now >= next_progress) {
            double secs = (double)(now - last_progress) / 1e9;
            progress("%lld records received, %.1f records/sec (%.2f MB/sec)", count,
                     (double)(count - last_count) / secs, mib(bytes - last_bytes) / secs);
            last_count = count;
            last_bytes = bytes;
            last_progress = now;
            next_progress = now + 1000000000;
        }
    }
    progress_clear();
    {
        double secs = (double)(end - start) / 1e9;
        if (cli->json) {
            json_t *j = summary_json("consume", o, count, secs, bytes);
            if (j) {
                json_object_set_new(j, "bytes", json_integer((json_int_t)bytes));
                json_object_set_new(j, "errors", json_integer(errors));
                summary_print(j);
            }
        } else {
            printf("%lld records received, %.1f records/sec (%.2f MB/sec), %.2f MB in %.3f s.\n",
                   count, secs > 0 ? count / secs : 0.0, secs > 0 ? mib(bytes) / secs : 0.0,
                   mib(bytes), secs);
            fflush(stdout);
        }
    }
    if (count < o->records && !atomic_load(&perf_sig.stop)) {
        sf_cli_error(cli, "only %lld of %lld records arrived (none for %lld ms)", count,
                     o->records, o->timeout_ms);
        return SF_CLI_EXIT_FAIL;
    }
    return errors ? SF_CLI_EXIT_FAIL : SF_CLI_EXIT_OK;
}

/* ---- perf e2e --------------------------------------------------------------------------- */

#define E2E_HDR 24 /* run id, sequence number, send time (ns), little endian */

static void put_le64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

typedef struct e2e_producer {
    const perf_opts_t *o;
    sf_producer_t *p;
    uint64_t run_id;
    unsigned char *payload;
    long long sent;
    atomic_llong failed;
    atomic_int done;
    int first_err;
    int send_err;
} e2e_producer_t;

static void e2e_on_delivery(const sf_delivery_t *d, void *opaque) {
    e2e_producer_t *ep = opaque;
    if (d->err) {
        if (atomic_fetch_add(&ep->failed, 1) == 0)
            ep->first_err = d->err;
    }
}

static void *e2e_producer_main(void *arg) {
    e2e_producer_t *ep = arg;
    const perf_opts_t *o = ep->o;
    sf_record_t rec;
    int64_t start = sf_clidata_now_ns();

    memset(&rec, 0, sizeof(rec));
    rec.topic = o->topic;
    rec.partition = (int32_t)o->partition;
    rec.value = ep->payload;
    rec.value_len = (size_t)o->record_size;
    put_le64(ep->payload, ep->run_id);
    for (long long i = 0; i < o->records && !atomic_load(&perf_sig.stop); i++) {
        int64_t now = sf_clidata_now_ns();
        int err;
        if (o->rate > 0) {
            int64_t due = start + (int64_t)((double)i * 1e9 / (double)o->rate);
            while (now < due && !atomic_load(&perf_sig.stop)) {
                int64_t left = due - now;
                if (left > 2000000) {
                    sf_producer_poll(ep->p, (int)(left / 1000000) - 1);
                } else {
                    struct timespec ts = {0, (long)left};
                    nanosleep(&ts, NULL);
                }
                now = sf_clidata_now_ns();
            }
        }
        put_le64(ep->payload + 8, (uint64_t)i);
        put_le64(ep->payload + 16, (uint64_t)now);
        err = sf_producer_send(ep->p, &rec, e2e_on_delivery, ep);
        if (err) {
            ep->send_err = err;
            break;
        }
        ep->sent++;
        sf_producer_poll(ep->p, 0);
    }
    while (sf_producer_outstanding(ep->p) > 0 && !atomic_load(&perf_sig.stop))
        sf_producer_flush(ep->p, 200);
    atomic_store(&ep->done, 1);
    return NULL;
}

static int perf_e2e(sf_cli_t *cli, const perf_opts_t *o, sf_consumer_t **cp) {
    int32_t *ids = NULL;
    size_t nids = 0;
    sf_consumer_t *c;
    sf_conf_t *conf = NULL;
    e2e_producer_t ep;
    pthread_t thr;
    int thr_running = 0, rc, err;
    unsigned char *seen = NULL;
    sf_clidata_hist_t *hist = NULL;
    long long count = 0, dups = 0, last_count = 0;
    double last_sum = 0, sum = 0;
    int64_t start, now, last_msg, next_progress;
    char errstr[512];

    memset(&ep, 0, sizeof(ep));
    ep.o = o;
    rc = topic_partitions(cli, o->topic, o->partition, 1, &ids, &nids);
    if (rc)
        return rc;
    rc = SF_CLI_EXIT_FAIL;
    ep.payload = calloc(1, (size_t)o->record_size);
    seen = calloc((size_t)(o->records + 7) / 8, 1);
    hist = sf_clidata_hist_new();
    if (!ep.payload || !seen || !hist) {
        sf_cli_error(cli, "out of memory");
        goto out;
    }
    if (o->record_size > E2E_HDR)
        fill_payload(ep.payload + E2E_HDR, (size_t)o->record_size - E2E_HDR);
    ep.run_id = (uint64_t)sf_clidata_now_ns() ^ ((uint64_t)getpid() << 32) ^ 0x5346453245ull;

    /* The consumer sits at the end of every partition before the first record is sent. */
    if (!(c = *cp = perf_consumer(cli))) {
        rc = SF_CLI_EXIT_USAGE;
        goto out;
    }
    for (size_t i = 0; i < nids; i++) {
        err = sf_consumer_assign(c, o->topic, ids[i], SF_OFFSET_END);
        if (err) {
            rc = sf_cli_fail(cli, "assigning the partitions", err);
            goto out;
        }
    }
    for (size_t i = 0; i < nids; i++) { /* after every assign: they are resolved together */
        int64_t pos;
        err = sf_consumer_position(c, o->topic, ids[i], &pos, cli->timeout_ms);
        if (err) {
            rc = sf_cli_fail(cli, "positioning the consumer at the end", err);
            goto out;
        }
    }

    rc = SF_CLI_EXIT_USAGE;
    if (!(conf = sf_cli_conf(cli)))
        goto out;
    if (!o->po.linger_ms && sf_clidata_conf_set(cli, conf, "--linger-ms", "linger.ms", "0") < 0)
        goto out;
    if (sf_clidata_prodopts_apply(cli, conf, &o->po) < 0 || sf_clidata_conf_block(cli, conf) < 0)
        goto out;
    errstr[0] = '\0';
    if (!(ep.p = sf_producer_new(conf, errstr, sizeof(errstr)))) {
        sf_cli_error(cli, "cannot create a producer: %s", errstr[0] ? errstr : "out of memory");
        goto out;
    }
    rc = SF_CLI_EXIT_FAIL;
    if (pthread_create(&thr, NULL, e2e_producer_main, &ep) != 0) {
        sf_cli_error(cli, "cannot start a thread");
        goto out;
    }
    thr_running = 1;

    start = last_msg = sf_clidata_now_ns();
    next_progress = start + 1000000000;
    while (count < o->records && !atomic_load(&perf_sig.stop)) {
        sf_message_t *m = sf_consumer_poll(c, 200);
        now = sf_clidata_now_ns();
        if (m) {
            const unsigned char *v = m->value;
            if (!m->err && v && m->value_len >= E2E_HDR && get_le64(v) == ep.run_id) {
                uint64_t seq = get_le64(v + 8);
                int64_t lat_us = (now - (int64_t)get_le64(v + 16)) / 1000;
                if (seq < (uint64_t)o->records) {
                    if (seen[seq / 8] & (1u << (seq % 8))) {
                        dups++;
                    } else {
                        seen[seq / 8] |= (unsigned char)(1u << (seq % 8));
                        count++;
                        sf_clidata_hist_add(hist, lat_us);
                        sum += (double)lat_us;
                    }
                }
                last_msg = now;
            } else if (m->err) {
                char what[320];
                snprintf(what, sizeof(what), "%s [%d]", o->topic, (int)m->partition);
                sf_cli_fail(cli, what, m->err);
            }
            sf_message_destroy(m);
        } else if (atomic_load(&ep.done) && (now - last_msg) / 1000000 >= o->timeout_ms) {
            break;
        } else if (!atomic_load(&ep.done)) {
            last_msg = now; /* idle time counts once everything is sent */
        }
        if (now >= next_progress) {
            progress("%lld records received, %.2f ms avg latency", count,
                     count > last_count ? (sum - last_sum) / (double)(count - last_count) / 1000.0
                                        : 0.0);
            last_count = count;
            last_sum = sum;
            next_progress = now + 1000000000;
        }
    }
    atomic_store(&perf_sig.stop, 1); /* the producer thread stops too, if still sending */
    pthread_join(thr, NULL);
    thr_running = 0;
    progress_clear();
    if (cli->json) {
        json_t *j = json_object();
        if (j) {
            json_object_set_new(j, "test", json_string("e2e"));
            json_object_set_new(j, "topic", json_string(o->topic));
            json_object_set_new(j, "records", json_integer(count));
            json_object_set_new(j, "sent", json_integer(ep.sent));
            json_object_set_new(j, "record_size", json_integer(o->record_size));
            json_object_set_new(j, "rate", json_integer(o->rate));
            json_object_set_new(j, "duplicates", json_integer(dups));
            json_object_set_new(j, "errors", json_integer(atomic_load(&ep.failed)));
            latency_json(j, hist);
            summary_print(j);
        }
    } else {
        printf("%lld records received of %lld sent (%lld duplicates), %lld bytes each, "
               "end-to-end: ",
               count, ep.sent, dups, o->record_size);
        latency_text(stdout, hist);
        printf(".\n");
        fflush(stdout);
    }
    rc = SF_CLI_EXIT_OK;
    if (ep.send_err)
        rc = sf_cli_fail(cli, "sending", ep.send_err);
    if (atomic_load(&ep.failed)) {
        char what[128];
        snprintf(what, sizeof(what), "%lld records not delivered; the first",
                 (long long)atomic_load(&ep.failed));
        sf_cli_fail(cli, what, ep.first_err);
        rc = SF_CLI_EXIT_FAIL;
    }
    if (rc == SF_CLI_EXIT_OK && count < o->records && ep.sent == o->records) {
        sf_cli_error(cli, "only %lld of %lld records arrived (none for %lld ms)", count,
                     o->records, o->timeout_ms);
        rc = SF_CLI_EXIT_FAIL;
    }
out:
    if (thr_running) {
        atomic_store(&perf_sig.stop, 1);
        pthread_join(thr, NULL);
    }
    if (ep.p)
        sf_producer_destroy(ep.p);
    if (conf)
        sf_conf_destroy(conf);
    sf_clidata_hist_free(hist);
    free(seen);
    free(ep.payload);
    free(ids);
    return rc;
}

/* ---- entry ------------------------------------------------------------------------------ */

int sf_cmd_perf(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] = {
        SF_CLI_LONGOPTS,
        {"records", required_argument, NULL, OPT_RECORDS},
        {"num-records", required_argument, NULL, OPT_RECORDS},
        {"record-size", required_argument, NULL, OPT_RECORD_SIZE},
        {"throughput", required_argument, NULL, OPT_THROUGHPUT},
        {"rate", required_argument, NULL, OPT_RATE},
        {"partition", required_argument, NULL, OPT_PARTITION},
        {"acks", required_argument, NULL, OPT_ACKS},
        {"compression", required_argument, NULL, OPT_COMPRESSION},
        {"linger-ms", required_argument, NULL, OPT_LINGER},
        {"batch-size", required_argument, NULL, OPT_BATCH},
        {"timeout-ms", required_argument, NULL, OPT_TIMEOUT_MS},
        {"warmup-records", required_argument, NULL, OPT_WARMUP},
        {NULL, 0, NULL, 0}};
    /* Which sub-commands take each option (indexed by OPT_* - OPT_RECORDS). */
    static const int applies[] = {
        [OPT_RECORDS - OPT_RECORDS] = PERF_PRODUCE | PERF_CONSUME | PERF_E2E,
        [OPT_RECORD_SIZE - OPT_RECORDS] = PERF_PRODUCE | PERF_E2E,
        [OPT_THROUGHPUT - OPT_RECORDS] = PERF_PRODUCE,
        [OPT_RATE - OPT_RECORDS] = PERF_E2E,
        [OPT_PARTITION - OPT_RECORDS] = PERF_PRODUCE | PERF_CONSUME | PERF_E2E,
        [OPT_ACKS - OPT_RECORDS] = PERF_PRODUCE | PERF_E2E,
        [OPT_COMPRESSION - OPT_RECORDS] = PERF_PRODUCE | PERF_E2E,
        [OPT_LINGER - OPT_RECORDS] = PERF_PRODUCE | PERF_E2E,
        [OPT_BATCH - OPT_RECORDS] = PERF_PRODUCE | PERF_E2E,
        [OPT_TIMEOUT_MS - OPT_RECORDS] = PERF_CONSUME | PERF_E2E,
        [OPT_WARMUP - OPT_RECORDS] = PERF_PRODUCE,
    };
    perf_opts_t o;
    const char *usage;
    sf_consumer_t *cons = NULL;
    int rc = SF_CLI_EXIT_USAGE, c;

    memset(&o, 0, sizeof(o));
    o.records = -1;
    o.record_size = 100;
    o.throughput = -1;
    o.rate = 1000;
    o.partition = -1;
    o.timeout_ms = 10000;
    if (!strcmp(argv[0], "produce")) {
        o.mode = PERF_PRODUCE;
        usage = perf_produce_usage;
    } else if (!strcmp(argv[0], "consume")) {
        o.mode = PERF_CONSUME;
        usage = perf_consume_usage;
    } else if (!strcmp(argv[0], "e2e")) {
        o.mode = PERF_E2E;
        usage = perf_e2e_usage;
    } else {
        sf_cli_error(cli, "unknown sub-command '%s'; expected produce, consume or e2e", argv[0]);
        return SF_CLI_EXIT_USAGE;
    }

    optind = 0;
    while ((c = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        if (c >= OPT_RECORDS && c <= OPT_WARMUP && !(applies[c - OPT_RECORDS] & o.mode)) {
            sf_cli_error(cli, "option '%s' does not apply here; see '%s --help'",
                         argv[optind - 1], cli->prog);
            return SF_CLI_EXIT_USAGE;
        }
        switch (c) {
        case 'h':
            fputs(usage, stdout);
            sf_cli_print_common_options(stdout);
            return SF_CLI_EXIT_OK;
        case OPT_RECORDS:
            if (sf_cli_parse_int(cli, "--records", optarg, 1, LLONG_MAX / 2, &o.records) < 0)
                return SF_CLI_EXIT_USAGE;
            break;
        case OPT_RECORD_SIZE:
            if (sf_cli_parse_int(cli, "--record-size", optarg, o.mode == PERF_E2E ? E2E_HDR : 0,
                                 INT32_MAX, &o.record_size) < 0)
                return SF_CLI_EXIT_USAGE;
            break;
        case OPT_THROUGHPUT:
            if (sf_cli_parse_int(cli, "--throughput", optarg, -1, INT32_MAX, &o.throughput) < 0)
                return SF_CLI_EXIT_USAGE;
            break;
        case OPT_RATE:
            if (sf_cli_parse_int(cli, "--rate", optarg, -1, INT32_MAX, &o.rate) < 0)
                return SF_CLI_EXIT_USAGE;
            break;
        case OPT_PARTITION:
            if (sf_cli_parse_int(cli, "--partition", optarg, 0, INT32_MAX, &o.partition) < 0)
                return SF_CLI_EXIT_USAGE;
            break;
        case OPT_ACKS: o.po.acks = optarg; break;
        case OPT_COMPRESSION: o.po.compression = optarg; break;
        case OPT_LINGER: o.po.linger_ms = optarg; break;
        case OPT_BATCH: o.po.batch_size = optarg; break;
        case OPT_TIMEOUT_MS:
            if (sf_cli_parse_int(cli, "--timeout-ms", optarg, 1, INT_MAX, &o.timeout_ms) < 0)
                return SF_CLI_EXIT_USAGE;
            break;
        case OPT_WARMUP:
            if (sf_cli_parse_int(cli, "--warmup-records", optarg, 0, INT32_MAX, &o.warmup) < 0)
                return SF_CLI_EXIT_USAGE;
            break;
        default:
            return SF_CLI_EXIT_USAGE;
        }
    }
    if (!(o.topic = sf_clidata_topic_arg(cli, argc, argv)))
        return SF_CLI_EXIT_USAGE;
    if (o.records < 0) {
        sf_cli_error(cli, "--records N is required; see '%s --help'", cli->prog);
        return SF_CLI_EXIT_USAGE;
    }
    if ((o.throughput == 0 && o.mode == PERF_PRODUCE) || (o.rate == 0 && o.mode == PERF_E2E)) {
        sf_cli_error(cli, "a rate of 0 records/s would never finish (-1: unlimited)");
        return SF_CLI_EXIT_USAGE;
    }

    perf_progress_on = sf_clidata_progress_enabled();
    atomic_store(&perf_sig.stop, 0);
    atomic_store(&perf_sig.consumer, NULL);
    if (sf_clidata_sigthread_start(perf_on_signal, NULL) < 0) {
        sf_cli_error(cli, "cannot start the signal thread: %s", strerror(errno));
        return SF_CLI_EXIT_FAIL;
    }
    switch (o.mode) {
    case PERF_PRODUCE: rc = perf_produce(cli, &o); break;
    case PERF_CONSUME: rc = perf_consume(cli, &o, &cons); break;
    default: rc = perf_e2e(cli, &o, &cons); break;
    }
    sf_clidata_sigthread_stop();
    if (cons)
        perf_consumer_destroy(cons);
    return rc;
}
