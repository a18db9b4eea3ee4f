/*
 * sfbench: a librdkafka load generator for StreamFlow and for librdkafka's in-process mock
 * cluster, so that both are measured by the same client code in the same run.
 *
 *   sfbench produce --bootstrap B --topic T --records N --size S [--acks 1] [--linger-ms 5]
 *                   [--batch-size 1000000] [--rate R] [--partition 0 | --any-partition]
 *                   [--compression none|gzip|snappy|lz4|zstd]
 *   sfbench consume --bootstrap B --topic T --records N [--partition 0]
 *   sfbench latency --bootstrap B --topic T --rate 10000 --size 1024 --seconds 10 [--linger-ms 0]
 *   sfbench suite   --bootstrap B [--records N] [--records-1k N] [--rate R] [--seconds S]
 *   sfbench mock    --brokers 1 [suite options]   (the suite against an in-process mock cluster)
 *   sfbench serve-mock --brokers 1                (print the mock's bootstrap, serve until
 *                                                  SIGTERM/SIGINT; for trying clients)
 *
 * Each measurement prints one line of key=value pairs, e.g.
 *   produce topic=T records=N size=S seconds=1.234 rec_per_s=810000 mb_per_s=77.25 errors=0
 * Build: cc -O2 -o sfbench sfbench.c $(pkg-config --cflags --libs rdkafka)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

struct bench_opts {
    const char *bootstrap;
    const char *topic;
    long records;    /* produce / consume count */
    long records_1k; /* suite: count of 1 KiB records */
    int size;
    int size_set;
    const char *acks;
    int linger_ms;
    int linger_set;
    long batch_size;
    double rate;
    double seconds;
    int partition;
    int brokers;
    const char *compression; /* the producer's compression.type */
    int idempotence;         /* enable.idempotence */
    int max_in_flight;       /* max.in.flight.requests.per.connection, 0: librdkafka's */
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("sfbench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void conf_set(rd_kafka_conf_t *conf, const char *key, const char *val) {
    char errstr[512];
    if (rd_kafka_conf_set(conf, key, val, errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK)
        die("config %s=%s: %s", key, val, errstr);
}

static void conf_setl(rd_kafka_conf_t *conf, const char *key, long val) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%ld", val);
    conf_set(conf, key, buf);
}

static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
    (void)rk;
    if (level <= 4 || getenv("SFBENCH_DEBUG")) /* warnings and worse */
        fprintf(stderr, "sfbench: librdkafka %s: %s\n", fac, buf);
}

static rd_kafka_conf_t *base_conf(const char *bootstrap) {
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    conf_set(conf, "bootstrap.servers", bootstrap);
    conf_set(conf, "broker.address.family", "v4");
    conf_set(conf, "client.id", "sfbench");
    rd_kafka_conf_set_log_cb(conf, log_cb);
    return conf;
}

/* ---- produce ---------------------------------------------------------------------------- */

struct dr_state {
    long ok;
    long failed;
    rd_kafka_resp_err_t first_err;
    int64_t *sent_ns;   /* latency mode: send time per message index */
    int64_t *latency;   /* latency mode: delivery latency per message index (ns) */
};

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque) {
    struct dr_state *st = opaque;
    (void)rk;
    if (msg->err) {
        if (st->failed++ == 0)
            st->first_err = msg->err;
        return;
    }
    st->ok++;
    if (st->latency) {
        long idx = (long)(intptr_t)msg->_private;
        if (idx >= 0)
            st->latency[idx] = now_ns() - st->sent_ns[idx];
    }
}

static rd_kafka_t *new_producer(const struct bench_opts *o, struct dr_state *st) {
    char errstr[512];
    rd_kafka_conf_t *conf = base_conf(o->bootstrap);
    rd_kafka_t *rk;

    conf_set(conf, "acks", o->acks);
    conf_setl(conf, "linger.ms", o->linger_ms);
    conf_setl(conf, "batch.size", o->batch_size);
    conf_set(conf, "enable.idempotence", o->idempotence ? "true" : "false");
    if (o->max_in_flight > 0)
        conf_setl(conf, "max.in.flight.requests.per.connection", o->max_in_flight);
    conf_set(conf, "compression.type", o->compression);
    conf_setl(conf, "queue.buffering.max.messages", 1000000);
    conf_setl(conf, "queue.buffering.max.kbytes", 1048576);
    conf_setl(conf, "message.timeout.ms", 120000);
    rd_kafka_conf_set_opaque(conf, st);
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    if (!rk)
        die("rd_kafka_new: %s", errstr);
    return rk;
}

/* Wait until the topic's metadata is known (creating it on auto-create brokers), so that
 * connection set-up is not part of any measurement. */
static void wait_topic(rd_kafka_t *rk, const char *topic) {
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    int64_t deadline = now_ns() + 30LL * 1000000000;
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;

    while (now_ns() < deadline) {
        const struct rd_kafka_metadata *md = NULL;
        err = rd_kafka_metadata(rk, 0, rkt, &md, 5000);
        if (!err) {
            int ok = md->topic_cnt == 1 && !md->topics[0].err && md->topics[0].partition_cnt > 0;
            if (!ok)
                err = md->topic_cnt == 1 ? md->topics[0].err : RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC;
            rd_kafka_metadata_destroy(md);
            if (ok) {
                rd_kafka_topic_destroy(rkt);
                return;
            }
        }
        usleep(200000);
    }
    die("topic %s not available: %s", topic, rd_kafka_err2str(err));
}

static void produce_one(rd_kafka_t *rk, const struct bench_opts *o, const char *payload, void *priv) {
    for (;;) {
        rd_kafka_resp_err_t err = rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(o->topic), RD_KAFKA_V_PARTITION(o->partition),
            RD_KAFKA_V_VALUE((void *)payload, (size_t)o->size), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
            RD_KAFKA_V_OPAQUE(priv), RD_KAFKA_V_END);
        if (!err)
            return;
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
            die("produce: %s", rd_kafka_err2str(err));
        rd_kafka_poll(rk, 1);
    }
}

static char *make_payload(int size) {
    char *p = malloc((size_t)size + 1);
    if (!p)
        die("out of memory");
    for (int i = 0; i < size; i++)
        p[i] = (char)('a' + (i * 7 + i / 26) % 26);
    return p;
}

static void finish_producer(rd_kafka_t *rk) {
    if (rd_kafka_flush(rk, 180000) != RD_KAFKA_RESP_ERR_NO_ERROR)
        die("flush timed out with %d messages outstanding", rd_kafka_outq_len(rk));
}

static int cmd_produce(const struct bench_opts *o) {
    struct dr_state st = {0};
    rd_kafka_t *rk = new_producer(o, &st);
    char *payload = make_payload(o->size);
    int64_t start;
    double secs;

    wait_topic(rk, o->topic);
    start = now_ns();
    for (long i = 0; i < o->records && !stop_requested; i++) {
        if (o->rate > 0) {
            int64_t due = start + (int64_t)((double)i * 1e9 / o->rate);
            while (now_ns() < due)
                rd_kafka_poll(rk, 0), usleep(50);
        }
        produce_one(rk, o, payload, (void *)(intptr_t)-1);
        rd_kafka_poll(rk, 0);
    }
    finish_producer(rk);
    secs = (double)(now_ns() - start) / 1e9;
    printf("produce topic=%s records=%ld size=%d seconds=%.3f rec_per_s=%.0f mb_per_s=%.2f errors=%ld\n",
           o->topic, st.ok, o->size, secs, (double)st.ok / secs,
           (double)st.ok * o->size / secs / 1048576.0, st.failed);
    fflush(stdout);
    if (st.failed)
        fprintf(stderr, "sfbench: %ld delivery failures, first: %s\n", st.failed, rd_kafka_err2str(st.first_err));
    rd_kafka_destroy(rk);
    free(payload);
    return st.failed || st.ok != o->records ? 1 : 0;
}

/* ---- consume ---------------------------------------------------------------------------- */

/* Consume --records records of one partition from its low watermark. A log that holds
 * fewer records (librdkafka's mock cluster keeps only the last 5 MiB of each partition) is
 * read again from the low watermark until the count is reached; passes= says how often. */
static int cmd_consume(const struct bench_opts *o) {
    char errstr[512];
    rd_kafka_conf_t *conf = base_conf(o->bootstrap);
    rd_kafka_t *rk;
    rd_kafka_topic_t *rkt;
    rd_kafka_message_t *msgs[1000];
    rd_kafka_resp_err_t err;
    int64_t lo = 0, hi = 0;
    long got = 0, bytes = 0, errors = 0, passes = 1;
    int64_t start, last_progress;
    double secs;

    if (getenv("SFBENCH_DEBUG"))
        conf_set(conf, "debug", getenv("SFBENCH_DEBUG"));
    conf_set(conf, "enable.partition.eof", "false");
    conf_setl(conf, "queued.min.messages", 200000);
    conf_setl(conf, "fetch.wait.max.ms", 10);
    rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
    if (!rk)
        die("rd_kafka_new: %s", errstr);
    err = rd_kafka_query_watermark_offsets(rk, o->topic, o->partition, &lo, &hi, 10000);
    if (err)
        die("watermarks of %s [%d]: %s", o->topic, o->partition, rd_kafka_err2str(err));
    if (hi <= lo)
        die("%s [%d] is empty", o->topic, o->partition);
    rkt = rd_kafka_topic_new(rk, o->topic, NULL);
    start = now_ns();
    last_progress = start;
    /* The legacy per-partition API needs no consumer group. */
    if (rd_kafka_consume_start(rkt, o->partition, lo) == -1)
        die("consume_start: %s", rd_kafka_err2str(rd_kafka_last_error()));
    while (got < o->records && !stop_requested) {
        ssize_t n = rd_kafka_consume_batch(rkt, o->partition, 10, msgs, 1000);
        int wrap = 0;
        if (n < 0)
            die("consume_batch: %s", rd_kafka_err2str(rd_kafka_last_error()));
        for (ssize_t i = 0; i < n; i++) {
            if (msgs[i]->err) {
                if (errors++ < 5)
                    fprintf(stderr, "sfbench: consume error: %s\n", rd_kafka_message_errstr(msgs[i]));
            } else if (got < o->records && !wrap) {
                got++;
                bytes += (long)msgs[i]->len;
                if (msgs[i]->offset >= hi - 1 && got < o->records)
                    wrap = 1;
            }
            rd_kafka_message_destroy(msgs[i]);
        }
        if (wrap) {
            err = rd_kafka_seek(rkt, o->partition, lo, 10000);
            if (err)
                die("seek: %s", rd_kafka_err2str(err));
            passes++;
        }
        if (n > 0)
            last_progress = now_ns();
        else if (now_ns() - last_progress > 30LL * 1000000000)
            die("no records for 30s after %ld of %ld", got, o->records);
    }
    secs = (double)(now_ns() - start) / 1e9;
    rd_kafka_consume_stop(rkt, o->partition);
    printf("consume topic=%s records=%ld bytes=%ld passes=%ld seconds=%.3f rec_per_s=%.0f mb_per_s=%.2f errors=%ld\n",
           o->topic, got, bytes, passes, secs, (double)got / secs, (double)bytes / secs / 1048576.0, errors);
    fflush(stdout);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    return got == o->records && !errors ? 0 : 1;
}

/* ---- latency ---------------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmd_latency(const struct bench_opts *o) {
    long n = (long)(o->rate * o->seconds);
    struct dr_state st = {0};
    rd_kafka_t *rk;
    char *payload = make_payload(o->size);
    int64_t start;
    long measured = 0;

    if (n <= 0)
        die("latency: --rate and --seconds must be positive");
    st.sent_ns = calloc((size_t)n, sizeof(int64_t));
    st.latency = calloc((size_t)n, sizeof(int64_t));
    if (!st.sent_ns || !st.latency)
        die("out of memory");
    for (long i = 0; i < n; i++)
        st.latency[i] = -1;
    rk = new_producer(o, &st);
    wait_topic(rk, o->topic);
    /* Warm-up: connections and buffers in place before the first measured record. */
    for (int i = 0; i < 100; i++)
        produce_one(rk, o, payload, (void *)(intptr_t)-1);
    finish_producer(rk);
    st.ok = 0;

    start = now_ns();
    for (long i = 0; i < n && !stop_requested;) {
        long due = (long)((double)(now_ns() - start) * o->rate / 1e9) + 1;
        if (due > n)
            due = n;
        for (; i < due; i++) {
            st.sent_ns[i] = now_ns();
            produce_one(rk, o, payload, (void *)(intptr_t)i);
        }
        rd_kafka_poll(rk, 0);
        usleep(100);
    }
    finish_producer(rk);

    for (long i = 0; i < n; i++)
        if (st.latency[i] >= 0)
            st.latency[measured++] = st.latency[i];
    if (measured == 0)
        die("latency: no record delivered");
    qsort(st.latency, (size_t)measured, sizeof(int64_t), cmp_i64);
#define PCT(p) ((double)st.latency[(long)((double)(measured - 1) * (p))] / 1e6)
    printf("latency topic=%s records=%ld size=%d rate=%.0f p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f max_ms=%.3f errors=%ld\n",
           o->topic, measured, o->size, o->rate, PCT(0.50), PCT(0.99), PCT(0.999),
           (double)st.latency[measured - 1] / 1e6, st.failed);
#undef PCT
    fflush(stdout);
    rd_kafka_destroy(rk);
    free(st.sent_ns);
    free(st.latency);
    free(payload);
    return st.failed ? 1 : 0;
}

/* ---- suite and mock --------------------------------------------------------------------- */

/* The fixed series bench/run reports: 100 B and 1 KiB produce, consume of the 1 KiB topic,
 * and produce latency at a fixed rate. Topics: sfbench-100, sfbench-1k, sfbench-lat. */
static int cmd_suite(const struct bench_opts *in) {
    struct bench_opts o = *in;
    int rc = 0;

    o.rate = 0; /* --rate paces only the latency step */
    o.topic = "sfbench-100";
    o.size = 100;
    rc |= cmd_produce(&o);
    o.topic = "sfbench-1k";
    o.size = 1024;
    o.records = in->records_1k;
    rc |= cmd_produce(&o);
    rc |= cmd_consume(&o);
    o.topic = "sfbench-lat";
    o.size = 1024;
    o.linger_ms = in->linger_set ? in->linger_ms : 0;
    o.rate = in->rate > 0 ? in->rate : 10000;
    rc |= cmd_latency(&o);
    return rc;
}

static rd_kafka_mock_cluster_t *mock_start(int brokers, rd_kafka_t **rkp) {
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_t *rk;
    rd_kafka_mock_cluster_t *mc;

    rd_kafka_conf_set_log_cb(conf, log_cb);
    rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    if (!rk)
        die("rd_kafka_new: %s", errstr);
    mc = rd_kafka_mock_cluster_new(rk, brokers);
    if (!mc)
        die("cannot start the mock cluster");
    *rkp = rk;
    return mc;
}

static int cmd_mock(const struct bench_opts *in) {
    struct bench_opts o = *in;
    rd_kafka_t *rk;
    rd_kafka_mock_cluster_t *mc = mock_start(in->brokers, &rk);
    static const char *topics[] = {"sfbench-100", "sfbench-1k", "sfbench-lat"};
    int rc;

    for (size_t i = 0; i < sizeof(topics) / sizeof(topics[0]); i++)
        if (rd_kafka_mock_topic_create(mc, topics[i], 1, 1))
            die("mock: cannot create topic %s", topics[i]);
    o.bootstrap = rd_kafka_mock_cluster_bootstraps(mc);
    fprintf(stderr, "sfbench: mock cluster with %d broker(s) at %s\n", in->brokers, o.bootstrap);
    rc = cmd_suite(&o);
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
    return rc;
}

static int cmd_serve_mock(const struct bench_opts *in) {
    rd_kafka_t *rk;
    rd_kafka_mock_cluster_t *mc = mock_start(in->brokers, &rk);

    printf("bootstrap=%s\n", rd_kafka_mock_cluster_bootstraps(mc));
    fflush(stdout);
    while (!stop_requested)
        pause();
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
    return 0;
}

/* ---- main ------------------------------------------------------------------------------- */

static void usage(FILE *f) {
    fputs("usage:\n"
          "  sfbench produce --bootstrap B --topic T --records N --size S [--acks 1] [--linger-ms 5]\n"
          "                  [--batch-size 1000000] [--rate R] [--partition P | --any-partition]\n"
          "                  [--compression none|gzip|snappy|lz4|zstd] [--idempotence]\n"
          "                  [--max-in-flight N]\n"
          "  sfbench consume --bootstrap B --topic T --records N [--partition P]\n"
          "  sfbench latency --bootstrap B --topic T [--rate 10000] [--size 1024] [--seconds 10] [--linger-ms 0]\n"
          "  sfbench suite   --bootstrap B [--records N] [--records-1k N] [--rate R] [--seconds S]\n"
          "  sfbench mock    [--brokers 1] [suite options]\n"
          "  sfbench serve-mock [--brokers 1]\n",
          f);
}

static long parse_long(const char *s, const char *what) {
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < 0)
        die("%s: not a non-negative integer: %s", what, s);
    return v;
}

int main(int argc, char **argv) {
    static const struct option longopts[] = {
        {"bootstrap", required_argument, NULL, 'b'}, {"topic", required_argument, NULL, 't'},
        {"records", required_argument, NULL, 'n'},   {"records-1k", required_argument, NULL, 'k'},
        {"size", required_argument, NULL, 's'},      {"acks", required_argument, NULL, 'a'},
        {"linger-ms", required_argument, NULL, 'l'}, {"batch-size", required_argument, NULL, 'B'},
        {"rate", required_argument, NULL, 'r'},      {"seconds", required_argument, NULL, 'S'},
        {"partition", required_argument, NULL, 'p'}, {"brokers", required_argument, NULL, 'N'},
        {"any-partition", no_argument, NULL, 'A'}, {"compression", required_argument, NULL, 'C'},
        {"idempotence", no_argument, NULL, 'I'},     {"max-in-flight", required_argument, NULL, 'M'},
        {"help", no_argument, NULL, 'h'},            {NULL, 0, NULL, 0}};
    struct bench_opts o = {
        .topic = "sfbench", .records = 1000000, .records_1k = 500000, .size = 100, .acks = "1",
        .linger_ms = 5, .batch_size = 1000000, .rate = 0, .seconds = 10, .partition = 0, .brokers = 1,
        .compression = "none"};
    const char *cmd;
    int c;

    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    cmd = argv[1];
    optind = 2;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'b': o.bootstrap = optarg; break;
        case 't': o.topic = optarg; break;
        case 'n': o.records = parse_long(optarg, "--records"); break;
        case 'k': o.records_1k = parse_long(optarg, "--records-1k"); break;
        case 's': o.size = (int)parse_long(optarg, "--size"); o.size_set = 1; break;
        case 'a': o.acks = optarg; break;
        case 'l': o.linger_ms = (int)parse_long(optarg, "--linger-ms"); o.linger_set = 1; break;
        case 'B': o.batch_size = parse_long(optarg, "--batch-size"); break;
        case 'r': o.rate = (double)parse_long(optarg, "--rate"); break;
        case 'S': o.seconds = (double)parse_long(optarg, "--seconds"); break;
        case 'p': o.partition = (int)parse_long(optarg, "--partition"); break;
        case 'A': o.partition = RD_KAFKA_PARTITION_UA; break; /* the partitioner spreads them */
        case 'C': o.compression = optarg; break;
        case 'I': o.idempotence = 1; break;
        case 'M': o.max_in_flight = (int)parse_long(optarg, "--max-in-flight"); break;
        case 'N': o.brokers = (int)parse_long(optarg, "--brokers"); break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    if (!strcmp(cmd, "mock"))
        return cmd_mock(&o);
    if (!strcmp(cmd, "serve-mock"))
        return cmd_serve_mock(&o);
    if (!o.bootstrap)
        die("%s needs --bootstrap", cmd);
    if (!strcmp(cmd, "produce"))
        return cmd_produce(&o);
    if (!strcmp(cmd, "consume"))
        return cmd_consume(&o);
    if (!strcmp(cmd, "latency")) {
        if (!o.linger_set)
            o.linger_ms = 0;
        if (o.rate <= 0)
            o.rate = 10000;
        if (!o.size_set)
            o.size = 1024;
        return cmd_latency(&o);
    }
    if (!strcmp(cmd, "suite"))
        return cmd_suite(&o);
    usage(stderr);
    return 2;
}
