/* eoscopy: an exactly-once consume-transform-produce pipeline on libstreamflow's public API,
 * for 38-transactional-offsets.sh.
 *
 *   eoscopy BOOTSTRAP IN OUT GROUP TRANSACTIONAL_ID PROGRESS
 *   eoscopy BOOTSTRAP IN OUT GROUP TRANSACTIONAL_ID --stale-generation
 *
 * A member of GROUP (read_committed) copies IN's records to the same partitions of OUT, a
 * few hundred per transaction, each transaction also committing the member's offsets with
 * its group metadata (sf_producer_send_offsets_to_transaction_group, KIP-447); after each
 * commit the number of transactions is written to PROGRESS. A commit the coordinator refuses
 * because the group moved on aborts the transaction and copies those records again from
 * where it started. Exits 0 once nothing came for 3 s after something was copied (or 1 after
 * 60 s with nothing), 1 on an error. A second run after a kill -9 fences the first's
 * producer, whose open transaction is aborted, and starts from the committed offsets.
 *
 * --stale-generation: a member takes the group metadata, a second member joins (a new
 * generation), and offsets sent with the old metadata must be refused with
 * ILLEGAL_GENERATION; exit 0 if so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "streamflow.h"

#define BATCH 300
#define MAX_PARTS 64

static void die(const char *what, int err) {
    fprintf(stderr, "eoscopy: %s: %s\n", what, sf_error_name(err));
    exit(1);
}

static sf_conf_t *conf_of(const char *bootstrap, const char *const *kv) {
    sf_conf_t *conf = sf_conf_new();
    char errstr[256];
    if (!conf || sf_conf_set(conf, "bootstrap.servers", bootstrap, errstr, sizeof errstr))
        die("configuration", SF_ERROR_INVALID);
    for (; kv && kv[0]; kv += 2)
        if (sf_conf_set(conf, kv[0], kv[1], errstr, sizeof errstr)) {
            fprintf(stderr, "eoscopy: %s\n", errstr);
            exit(1);
        }
    return conf;
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void progress(const char *path, long long n) {
    char tmp[4096];
    FILE *f;
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (!(f = fopen(tmp, "w")) || fprintf(f, "%lld\n", n) < 0 || fclose(f) || rename(tmp, path))
        die("writing the progress file", SF_ERROR_IO);
}

/* 1 for the refusals of a commit whose member left the generation it names. */
static int group_moved_on(int rc) {
    return rc == 22 /* ILLEGAL_GENERATION */ || rc == 25 /* UNKNOWN_MEMBER_ID */ ||
           rc == 27 /* REBALANCE_IN_PROGRESS */ || rc == 82 /* FENCED_INSTANCE_ID */;
}

/* Offsets of the member, with its group metadata as it is now. */
static int send_offsets(sf_consumer_t *c, sf_producer_t *p, const sf_topic_partition_t *offs,
                        size_t noffs) {
    sf_group_metadata_t *md = sf_consumer_group_metadata(c);
    int rc;
    if (!md)
        die("group metadata", SF_ERROR_NOMEM);
    rc = sf_producer_send_offsets_to_transaction_group(p, offs, noffs, md, 30000);
    sf_group_metadata_destroy(md);
    return rc;
}

/* One transaction of up to BATCH records: returns how many were copied. */
static int copy_batch(sf_consumer_t *c, sf_producer_t *p, const char *in, const char *out) {
    sf_topic_partition_t offs[MAX_PARTS];
    int64_t first[MAX_PARTS];
    size_t noffs = 0, i;
    int n = 0, rc;
    sf_message_t *m;
    while (n < BATCH && (m = sf_consumer_poll(c, n ? 100 : 1000)) != NULL) {
        sf_record_t rec;
        if (m->err || m->partition < 0) {
            sf_message_destroy(m);
            continue;
        }
        if (!n && (rc = sf_producer_begin_transaction(p)) != SF_OK)
            die("begin", rc);
        memset(&rec, 0, sizeof rec);
        rec.topic = out;
        rec.partition = m->partition;
        rec.value = m->value;
        rec.value_len = m->value_len;
        if ((rc = sf_producer_send(p, &rec, NULL, NULL)) != SF_OK)
            die("send", rc);
        for (i = 0; i < noffs && offs[i].partition != m->partition; i++)
            ;
        if (i == noffs && noffs < MAX_PARTS) {
            offs[noffs].topic = in;
            offs[noffs].partition = m->partition;
            first[noffs] = m->offset;
            offs[noffs++].err = 0;
        }
        if (i < noffs)
            offs[i].offset = m->offset + 1;
        n++;
        sf_message_destroy(m);
    }
    if (!n)
        return 0;
    if (group_moved_on(rc = send_offsets(c, p, offs, noffs))) {
        /* A rebalance moved on: the records go again, in this member's next generation or
         * by the member the partitions went to. */
        if ((rc = sf_producer_abort_transaction(p, 60000)) != SF_OK)
            die("abort", rc);
        for (i = 0; i < noffs; i++)
            (void)sf_consumer_seek(c, in, offs[i].partition, first[i]); /* may be gone */
        return 0;
    }
    if (rc != SF_OK)
        die("send_offsets_to_transaction_group", rc);
    if ((rc = sf_producer_commit_transaction(p, 60000)) != SF_OK)
        die("commit", rc);
    return n;
}

/* Poll @c until it has an assignment (30 s at most). */
static void poll_assigned(sf_consumer_t *c) {
    long long until = now_ms() + 30000;
    sf_topic_partition_t *parts = NULL;
    size_t n = 0;
    while (!n && now_ms() < until) {
        sf_message_t *m = sf_consumer_poll(c, 100);
        sf_message_destroy(m);
        sf_topic_partitions_destroy(parts);
        parts = NULL;
        if (sf_consumer_assignment(c, &parts, &n) != SF_OK)
            n = 0;
    }
    sf_topic_partitions_destroy(parts);
    if (!n)
        die("no assignment", SF_ERROR_TIMED_OUT);
}

static int stale_generation(sf_consumer_t *c, sf_producer_t *p, sf_conf_t *cconf,
                            const char *in) {
    sf_topic_partition_t off = {in, 0, 0, 0};
    sf_group_metadata_t *md;
    sf_consumer_t *second;
    char errstr[256];
    long long until;
    int rc;
    poll_assigned(c);
    if (!(md = sf_consumer_group_metadata(c)))
        die("group metadata", SF_ERROR_NOMEM);
    if (!(second = sf_consumer_new(cconf, errstr, sizeof errstr)) ||
        sf_consumer_subscribe(second, &in, 1) != SF_OK)
        die("second member", SF_ERROR_STATE);
    /* Both poll until the second has its share: the first member is then in a newer
     * generation, and its old metadata names one the group left. */
    for (until = now_ms() + 30000; now_ms() < until;) {
        sf_topic_partition_t *parts = NULL;
        size_t n = 0;
        sf_message_destroy(sf_consumer_poll(c, 50));
        sf_message_destroy(sf_consumer_poll(second, 50));
        if (sf_consumer_assignment(second, &parts, &n) == SF_OK && n) {
            sf_topic_partitions_destroy(parts);
            break;
        }
        sf_topic_partitions_destroy(parts);
    }
    if ((rc = sf_producer_begin_transaction(p)) != SF_OK)
        die("begin", rc);
    rc = sf_producer_send_offsets_to_transaction_group(p, &off, 1, md, 30000);
    sf_group_metadata_destroy(md);
    if (rc != 22) {
        fprintf(stderr, "eoscopy: offsets sent with a left generation: %s, expected "
                "ILLEGAL_GENERATION\n", sf_error_name(rc));
        return 1;
    }
    if ((rc = sf_producer_abort_transaction(p, 60000)) != SF_OK)
        die("abort", rc);
    if ((rc = sf_producer_begin_transaction(p)) != SF_OK)
        die("begin", rc);
    if ((rc = send_offsets(c, p, &off, 1)) != SF_OK)
        die("offsets with the current generation", rc);
    if ((rc = sf_producer_abort_transaction(p, 60000)) != SF_OK)
        die("abort", rc);
    printf("  offsets sent with a left generation: ILLEGAL_GENERATION; with the current one: "
           "accepted\n");
    sf_consumer_destroy(second);
    return 0;
}

int main(int argc, char **argv) {
    const char *cons_kv[] = {"group.id", NULL, "isolation.level", "read_committed",
                             "enable.auto.commit", "false", "auto.offset.reset", "earliest",
                             "session.timeout.ms", "6000", "heartbeat.interval.ms", "1000",
                             NULL};
    const char *prod_kv[] = {"transactional.id", NULL, "linger.ms", "5", NULL};
    char errstr[256];
    sf_conf_t *cconf, *pconf;
    sf_consumer_t *c;
    sf_producer_t *p;
    long long txns = 0, copied = 0, last = now_ms(), start = last;
    int rc;
    if (argc != 7) {
        fprintf(stderr, "usage: eoscopy BOOTSTRAP IN OUT GROUP TRANSACTIONAL_ID "
                "PROGRESS|--stale-generation\n");
        return 2;
    }
    cons_kv[1] = argv[4];
    prod_kv[1] = argv[5];
    cconf = conf_of(argv[1], cons_kv);
    pconf = conf_of(argv[1], prod_kv);
    if (!(c = sf_consumer_new(cconf, errstr, sizeof errstr)) ||
        !(p = sf_producer_new(pconf, errstr, sizeof errstr))) {
        fprintf(stderr, "eoscopy: %s\n", errstr);
        return 1;
    }
    sf_conf_destroy(pconf);
    if ((rc = sf_producer_init_transactions(p, 60000)) != SF_OK)
        die("init_transactions", rc);
    if ((rc = sf_consumer_subscribe(c, (const char *const *)&argv[2], 1)) != SF_OK)
        die("subscribe", rc);
    if (!strcmp(argv[6], "--stale-generation")) {
        rc = stale_generation(c, p, cconf, argv[2]);
        sf_conf_destroy(cconf);
        sf_consumer_destroy(c);
        sf_producer_destroy(p);
        return rc;
    }
    sf_conf_destroy(cconf);
    while (copied ? now_ms() - last < 3000 : now_ms() - start < 60000) {
        int n = copy_batch(c, p, argv[2], argv[3]);
        if (n) {
            copied += n;
            progress(argv[6], ++txns);
            last = now_ms();
        }
    }
    printf("  libstreamflow pipeline: %lld records in %lld transactions\n", copied, txns);
    sf_consumer_destroy(c);
    sf_producer_destroy(p);
    return copied ? 0 : 1;
}
