/* The consumer: explicitly assigned partitions, offset resets with ListOffsets, pipelined
 * Fetch requests grouped by leader, whose records are decoded into message chunks
 * (records.h).
 *
 * State. Everything below lives under the client lock (client.h): the I/O thread runs the
 * fetch scheduler from the role hooks and request callbacks; application threads assign,
 * seek and poll. Each assigned partition is a cpart_t with its own position, state and queue
 * of decoded message chunks; how a partition got assigned does not matter to the fetch loop,
 * so a group coordinator can drive assign/unassign/seek and read positions later.
 *
 * A partition's epoch changes on every seek and unassign. Requests carry the epoch they were
 * sent with, and a response for an older epoch is ignored, so records fetched before a seek
 * are never delivered after it.
 *
 * Fetching. One Fetch per leader is in flight at a time, holding every fetchable partition of
 * that leader; its response is decoded in the I/O thread and the next Fetch leaves right away,
 * for the partitions whose queues are below their share of queued.max.messages.kbytes. So the
 * broker works on the next batch while the application polls the previous one. */
#include "consumer.h"

#include <event2/event.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "cgroup.h"
#include "clientconf.h"
#include "clock.h"
#include "err.h"
#include "proto.h"

/* ------------------------------------------------------------------------------------------
 * Consumer state
 * ------------------------------------------------------------------------------------------ */

enum {
    PART_ACTIVE, /* the position is known: fetching */
    PART_RESET,  /* the position must be resolved with ListOffsets (reset_to) */
    PART_PAUSED  /* stopped after an error reported to the application; seek resumes */
};

typedef struct cpart cpart_t;
struct cpart {
    char *topic;
    int32_t partition;
    int state;
    int64_t reset_to;     /* PART_RESET: SF_OFFSET_BEGINNING, SF_OFFSET_END or a timestamp */
    int64_t fetch_pos;    /* the next offset to fetch; -1 until resolved */
    uint32_t epoch;       /* changes on seek and unassign */
    int refs;             /* the table + requests in flight */
    int removed;          /* unassigned */
    int fetching;         /* a Fetch with the current epoch is in flight */
    int resetting;        /* a ListOffsets with the current epoch is in flight */
    int wait_meta;        /* waiting for a leader in the metadata */
    int retries;          /* consecutive metadata waits, for the backoff */
    int64_t backoff_until; /* sf_clock_mono_ms time before which nothing is sent */
    int32_t fetch_bytes;  /* PartitionMaxBytes of the next fetch */
    int err;              /* PART_PAUSED: why */
    int64_t high_watermark; /* from the last fetch response, -1 unknown */
    sf_consumer_chunk_t *qhead, *qtail; /* decoded, not yet polled */
    size_t queued;        /* bytes held by the queue */
    cpart_t *rprev, *rnext; /* the consumer's ready list (partitions with messages) */
    int in_ready;
};

typedef struct fetch_cand {
    int32_t leader;
    cpart_t *part;
    int held; /* its queue is full: it holds back its leader's fetch */
} fetch_cand_t;

struct sf_consumer {
    sf_client_t *cl;
    cpart_t **parts;
    size_t nparts, capparts;
    cpart_t *ready_head, *ready_tail; /* round robin over partitions with messages */
    size_t queued;                    /* bytes in every partition queue */
    int throttled;                    /* a fetch was held back by queued.max.messages.kbytes */
    struct event *timer;              /* wakes the scheduler after a backoff (I/O thread) */
    int in_schedule, reschedule;
    unsigned npollers, wake_gen;
    int wake_pending;
    int stopped;
    fetch_cand_t *cands; /* scheduler scratch */
    size_t capcands;
    /* Brokers with a Fetch of ours in flight. One at a time per broker: a broker answers a
     * connection's requests in order, so a second fetch would wait behind the first one's
     * fetch.max.wait.ms anyway, and delay the data of its partitions by as much. */
    int32_t *busy;
    size_t nbusy, capbusy;
    sf_consumer_pool_t *pool; /* memory of the decoded chunks */
    sf_cgroup_t *group;       /* the group membership (group.id set), or NULL */
    /* A group member's last message handed out by poll: the application may still be
     * processing it, so the commits made in the background stop before it until the next
     * poll (a reference on the partition; NULL when none). */
    cpart_t *last_part;
    int64_t last_offset;
};

static const sf_clientconf_t *conf_of(sf_client_t *cl) {
    return sf_client_conf(cl);
}

sf_client_t *sf_consumer_client(sf_consumer_t *c) {
    return c->cl;
}

static void part_unref(cpart_t *part) {
    if (--part->refs == 0) {
        free(part->topic);
        free(part);
    }
}

static cpart_t *part_find(sf_consumer_t *c, const char *topic, int32_t partition, size_t *idx) {
    size_t i;
    for (i = 0; i < c->nparts; i++) {
        cpart_t *part = c->parts[i];
        if (part->partition == partition && strcmp(part->topic, topic) == 0) {
            if (idx)
                *idx = i;
            return part;
        }
    }
    return NULL;
}

/* The queue bytes one partition may hold before its fetching pauses. */
static size_t part_limit(sf_consumer_t *c, sf_client_t *cl) {
    size_t n = c->nparts ? c->nparts : 1;
    size_t lim = (size_t)conf_of(cl)->queued_max_bytes / n;
    return lim ? lim : 1;
}

static void ready_remove(sf_consumer_t *c, cpart_t *part) {
    if (!part->in_ready)
        return;
    if (part->rprev)
        part->rprev->rnext = part->rnext;
    else
        c->ready_head = part->rnext;
    if (part->rnext)
        part->rnext->rprev = part->rprev;
    else
        c->ready_tail = part->rprev;
    part->rprev = part->rnext = NULL;
    part->in_ready = 0;
}

static void ready_append(sf_consumer_t *c, cpart_t *part) {
    if (part->in_ready)
        return;
    part->rprev = c->ready_tail;
    part->rnext = NULL;
    if (c->ready_tail)
        c->ready_tail->rnext = part;
    else
        c->ready_head = part;
    c->ready_tail = part;
    part->in_ready = 1;
}

static void queue_push(sf_consumer_t *c, cpart_t *part, sf_consumer_chunk_t *chunk) {
    chunk->qnext = NULL;
    if (part->qtail)
        part->qtail->qnext = chunk;
    else
        part->qhead = chunk;
    part->qtail = chunk;
    part->queued += chunk->bytes;
    c->queued += chunk->bytes;
    ready_append(c, part);
}

/* Pop @part's exhausted head chunk (its messages belong to the application now). */
static void queue_pop(sf_consumer_t *c, cpart_t *part) {
    sf_consumer_chunk_t *chunk = part->qhead;
    part->qhead = chunk->qnext;
    if (!part->qhead)
        part->qtail = NULL;
    part->queued -= chunk->bytes;
    c->queued -= chunk->bytes;
}

static void queue_drop(sf_consumer_t *c, cpart_t *part) {
    while (part->qhead) {
        sf_consumer_chunk_t *chunk = part->qhead;
        queue_pop(c, part);
        sf_consumer_chunk_drop(chunk);
    }
    ready_remove(c, part);
}

/* Queue an error event for the application after what is queued already. */
static void part_report(sf_consumer_t *c, sf_client_t *cl, cpart_t *part, int64_t offset,
                        int err) {
    sf_consumer_chunk_t *chunk = sf_consumer_chunk_new_error(part->topic, part->partition,
                                                             offset, err);
    sf_client_log(cl, SF_LOG_LEVEL_WARNING, "consumer: %s [%d] at offset %lld: %s",
                  part->topic, (int)part->partition, (long long)offset, sf_error_str(err));
    if (!chunk)
        return;
    chunk->bytes = 0; /* events do not count against the queue limit */
    queue_push(c, part, chunk);
    sf_client_signal(cl);
}

/* Stop fetching @part until the application seeks. */
static void part_pause(sf_consumer_t *c, sf_client_t *cl, cpart_t *part, int err) {
    part_report(c, cl, part, part->fetch_pos, err);
    part->state = PART_PAUSED;
    part->err = err;
}

static int64_t part_backoff_ms(sf_client_t *cl, int retries) {
    int64_t ms = conf_of(cl)->retry_backoff_ms;
    int64_t cap = ms > 1000 ? ms : 1000;
    while (retries-- > 0 && ms < cap)
        ms *= 2;
    return ms < cap ? ms : cap;
}

/* A retriable failure on @part: refresh the metadata (the leader may have moved) and try
 * again after retry.backoff.ms. */
static void part_retry(sf_client_t *cl, cpart_t *part, int stale) {
    if (stale)
        sf_client_metadata_stale(cl);
    part->backoff_until = sf_clock_mono_ms() + conf_of(cl)->retry_backoff_ms;
}

/* The leader of @part, or -1 (then the metadata is refreshed, with a growing backoff). */
static int32_t part_leader(sf_client_t *cl, cpart_t *part, int64_t now) {
    const sf_client_topic_t *t = sf_client_topic(cl, part->topic);
    if (t && !t->err && part->partition < t->partition_count &&
        t->partitions[part->partition].leader >= 0) {
        part->wait_meta = 0;
        part->retries = 0;
        return t->partitions[part->partition].leader;
    }
    if (now >= part->backoff_until) {
        if (t && part->retries == 0)
            sf_client_log(cl, SF_LOG_LEVEL_DEBUG, "consumer: %s [%d]: no leader (%s)",
                          part->topic, (int)part->partition,
                          t->err ? sf_error_name(sf_client_kerr(t->err)) : "none yet");
        sf_client_metadata_stale(cl);
        part->backoff_until = now + part_backoff_ms(cl, part->retries++);
    }
    part->wait_meta = 1;
    return -1;
}

/* ------------------------------------------------------------------------------------------
 * ListOffsets (offset resets and watermarks)
 * ------------------------------------------------------------------------------------------ */

typedef struct lo_req {
    sf_consumer_t *c;
    cpart_t *part; /* NULL for a synchronous call */
    uint32_t epoch;
    const char *topic;
    int32_t partition;
    int64_t timestamp;
    /* the answer */
    int16_t kerr;
    int64_t offset;
} lo_req_t;

static int lo_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    lo_req_t *lo = arg;
    sf_proto_ListOffsetsRequest_ListOffsetsPartition_t rp;
    sf_proto_ListOffsetsRequest_ListOffsetsTopic_t rt;
    sf_proto_ListOffsetsRequest_t req;
    rp.PartitionIndex = lo->partition;
    rp.CurrentLeaderEpoch = -1;
    rp.Timestamp = lo->timestamp;
    rp.MaxNumOffsets = 1;
    rt.Name = sf_slice_cstr(lo->topic);
    rt.PartitionsCount = 1;
    rt.Partitions = &rp;
    req.ReplicaId = -1;
    req.IsolationLevel = (int8_t)conf_of(lo->c->cl)->isolation_level; /* latest: the LSO */
    req.TopicsCount = 1;
    req.Topics = &rt;
    return sf_proto_ListOffsetsRequest_encode(wb, version, &req);
}

static int lo_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    lo_req_t *lo = arg;
    sf_proto_ListOffsetsResponse_t resp;
    sf_arena_t arena;
    int rc, t, p;
    sf_arena_init(&arena, 0);
    rc = sf_proto_ListOffsetsResponse_decode(body, version, &arena, &resp);
    if (rc != SF_OK) {
        sf_arena_reset(&arena);
        return rc == SF_ERR_NOMEM ? SF_ERROR_NOMEM : SF_ERROR_MALFORMED;
    }
    rc = SF_ERROR_MALFORMED; /* unless the partition is in the answer */
    for (t = 0; t < resp.TopicsCount; t++) {
        const sf_proto_ListOffsetsResponse_ListOffsetsTopicResponse_t *rt = &resp.Topics[t];
        if (!sf_slice_eq(rt->Name, lo->topic))
            continue;
        for (p = 0; p < rt->PartitionsCount; p++) {
            const sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *rp = &rt->Partitions[p];
            if (rp->PartitionIndex != lo->partition)
                continue;
            lo->kerr = rp->ErrorCode;
            if (version == 0)
                lo->offset = rp->OldStyleOffsetsCount > 0 ? rp->OldStyleOffsets[0] : -1;
            else
                lo->offset = rp->Offset;
            rc = SF_OK;
        }
    }
    sf_arena_reset(&arena);
    return rc;
}

static void schedule(sf_consumer_t *c, sf_client_t *cl);

static void lo_done(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                    sf_rbuf_t *body, void *arg) {
    lo_req_t *lo = arg;
    sf_consumer_t *c = lo->c;
    cpart_t *part = lo->part;
    (void)broker_id;
    if (!err)
        err = lo_decode(body, version, lo);
    if (part->removed || part->epoch != lo->epoch || err == SF_ERROR_DESTROYED)
        goto out;
    part->resetting = 0;
    if (!err && lo->kerr)
        err = sf_client_kerr(lo->kerr);
    if (err) {
        if (sf_error_retriable(err) || err == SF_KERR_NOT_LEADER_OR_FOLLOWER ||
            err == SF_KERR_OFFSET_NOT_AVAILABLE || err == SF_ERROR_MALFORMED) {
            sf_client_log(cl, SF_LOG_LEVEL_DEBUG, "consumer: %s [%d]: ListOffsets: %s",
                          part->topic, (int)part->partition, sf_error_name(err));
            part_retry(cl, part, err != SF_KERR_OFFSET_NOT_AVAILABLE);
        } else {
            part_pause(c, cl, part, err);
        }
    } else if (lo->offset < 0 && lo->timestamp >= 0) {
        /* No record at or after the timestamp: the end. */
        part->reset_to = SF_OFFSET_END;
    } else if (lo->offset < 0) {
        part_retry(cl, part, 1);
    } else {
        part->state = PART_ACTIVE;
        part->fetch_pos = lo->offset;
        part->fetch_bytes = conf_of(cl)->max_partition_fetch_bytes;
        sf_client_signal(cl); /* sf_consumer_position waits for this */
    }
out:
    part_unref(part);
    free(lo);
    if (err != SF_ERROR_DESTROYED)
        schedule(c, cl);
}

static void lo_send(sf_consumer_t *c, sf_client_t *cl, cpart_t *part, int32_t leader) {
    lo_req_t *lo = calloc(1, sizeof(*lo));
    int rc;
    if (!lo) {
        part_retry(cl, part, 0);
        return;
    }
    lo->c = c;
    lo->part = part;
    lo->epoch = part->epoch;
    lo->topic = part->topic;
    lo->partition = part->partition;
    lo->timestamp = part->reset_to;
    part->refs++;
    part->resetting = 1;
    rc = sf_client_request(cl, leader, SF_PROTO_API_ListOffsets, 5, lo_encode, lo_done, lo, -1,
                           0);
    if (rc != SF_OK) {
        part->resetting = 0;
        part_unref(part);
        free(lo);
        part_retry(cl, part, 1);
    }
}

/* ------------------------------------------------------------------------------------------
 * Fetch
 * ------------------------------------------------------------------------------------------ */

typedef struct fetch_ent {
    cpart_t *part;
    uint32_t epoch;
    int64_t offset;
    int done;
} fetch_ent_t;

typedef struct fetch_req {
    sf_consumer_t *c;
    int32_t broker;
    int n, ntopics;
    int32_t max_wait, min_bytes, max_bytes;
    fetch_ent_t *ents;                         /* grouped by topic, as in the request */
    sf_proto_FetchRequest_FetchTopic_t *topics;
    sf_proto_FetchRequest_FetchPartition_t *fparts; /* parallel to ents */
} fetch_req_t;

static void fetch_req_free(fetch_req_t *fr) {
    free(fr->ents);
    free(fr->topics);
    free(fr->fparts);
    free(fr);
}

static int fetch_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    fetch_req_t *fr = arg;
    sf_proto_FetchRequest_t req;
    if (version < 4)
        return SF_ERROR_UNSUPPORTED;
    memset(&req, 0, sizeof(req));
    req.ReplicaId = -1;
    req.MaxWaitMs = fr->max_wait;
    req.MinBytes = fr->min_bytes;
    req.MaxBytes = fr->max_bytes;
    req.IsolationLevel = (int8_t)conf_of(fr->c->cl)->isolation_level;
    req.SessionId = 0;    /* no fetch session: every request is full */
    req.SessionEpoch = -1;
    req.TopicsCount = fr->ntopics;
    req.Topics = fr->topics;
    req.ForgottenTopicsDataCount = 0;
    req.RackId = sf_slice_cstr("");
    return sf_proto_FetchRequest_encode(wb, version, &req);
}

/* The entry of @fr for @topic/@partition, searching from *@hint (responses usually list the
 * partitions in request order). */
static fetch_ent_t *fetch_find(fetch_req_t *fr, sf_slice_t topic, int32_t partition, int *hint) {
    int i, k;
    for (k = 0; k < fr->n; k++) {
        i = (*hint + k) % fr->n;
        if (fr->ents[i].part->partition == partition &&
            sf_slice_eq(topic, fr->ents[i].part->topic)) {
            *hint = i + 1;
            return &fr->ents[i];
        }
    }
    return NULL;
}

/* A partition the fetch failed for as a whole (transport, top-level error). */
static void fetch_part_failed(sf_consumer_t *c, sf_client_t *cl, cpart_t *part, int err) {
    if (err == SF_ERROR_UNSUPPORTED)
        part_pause(c, cl, part, err);
    else
        part_retry(cl, part, 1);
}

static void fetch_partition(sf_consumer_t *c, sf_client_t *cl, fetch_ent_t *ent,
                            const sf_proto_FetchResponse_PartitionData_t *rp) {
    const sf_clientconf_t *conf = conf_of(cl);
    cpart_t *part = ent->part;
    int err = sf_client_kerr(rp->ErrorCode);
    sf_consumer_parse_t res;
    size_t naborted;

    if (err == SF_KERR_OFFSET_OUT_OF_RANGE) {
        if (conf->auto_offset_reset == SF_OFFSET_BEGINNING ||
            conf->auto_offset_reset == SF_OFFSET_END) {
            sf_client_log(cl, SF_LOG_LEVEL_INFO,
                          "consumer: %s [%d]: offset %lld out of range, resetting to %s",
                          part->topic, (int)part->partition, (long long)ent->offset,
                          conf->auto_offset_reset == SF_OFFSET_BEGINNING ? "earliest"
                                                                         : "latest");
            part->state = PART_RESET;
            part->reset_to = conf->auto_offset_reset;
        } else {
            part_pause(c, cl, part, err);
        }
        return;
    }
    if (err) {
        if (sf_error_retriable(err) || err == SF_KERR_NOT_LEADER_OR_FOLLOWER ||
            err == SF_KERR_FENCED_LEADER_EPOCH || err == SF_KERR_UNKNOWN_LEADER_EPOCH ||
            err == SF_KERR_KAFKA_STORAGE_ERROR || err == SF_KERR_OFFSET_NOT_AVAILABLE)
            part_retry(cl, part, 1);
        else
            part_pause(c, cl, part, err);
        return;
    }
    naborted = conf->isolation_level && rp->AbortedTransactionsCount > 0
                   ? (size_t)rp->AbortedTransactionsCount
                   : 0;
    /* read_committed: the end is the last stable offset */
    part->high_watermark = conf->isolation_level && rp->LastStableOffset >= 0
                               ? rp->LastStableOffset
                               : rp->HighWatermark;
    if (rp->Records.len <= 0)
        return;
    if (sf_consumer_parse_records(c->pool, part->topic, part->partition, rp->Records.p,
                                  (size_t)rp->Records.len, ent->offset,
                                  naborted ? (const sf_consumer_aborted_t *)rp->AbortedTransactions
                                           : NULL,
                                  naborted,
                                  conf->check_crcs, SF_CONSUMER_MAX_DECOMPRESSED,
                                  &res) != SF_OK) {
        part_retry(cl, part, 0);
        return;
    }
    if (res.chunk) {
        queue_push(c, part, res.chunk);
        sf_client_signal(cl);
    }
    part->fetch_pos = res.next_offset;
    if (res.err == SF_ERROR_NOMEM) {
        part_retry(cl, part, 0);
    } else if (res.err) {
        part_pause(c, cl, part, res.err);
    } else if (res.next_offset == ent->offset && res.partial_size > 0) {
        /* Not even one whole batch: the batch is larger than what was asked for (brokers
         * before KIP-74 answer so). Ask for enough next time, up to fetch.max.bytes. */
        size_t want = res.partial_size > (size_t)part->fetch_bytes * 2
                          ? res.partial_size
                          : (size_t)part->fetch_bytes * 2;
        if ((size_t)part->fetch_bytes >= (size_t)conf->fetch_max_bytes) {
            part_pause(c, cl, part, SF_ERROR_TOOLARGE);
            return;
        }
        part->fetch_bytes = want > (size_t)conf->fetch_max_bytes ? conf->fetch_max_bytes
                                                                 : (int32_t)want;
    } else if (res.next_offset != ent->offset) {
        part->fetch_bytes = conf->max_partition_fetch_bytes;
    }
}

static int broker_busy(sf_consumer_t *c, int32_t broker) {
    size_t i;
    for (i = 0; i < c->nbusy; i++)
        if (c->busy[i] == broker)
            return 1;
    return 0;
}

static int broker_busy_set(sf_consumer_t *c, int32_t broker) {
    if (c->nbusy == c->capbusy) {
        size_t cap = c->capbusy ? c->capbusy * 2 : 4;
        int32_t *busy = realloc(c->busy, cap * sizeof(*busy));
        if (!busy)
            return SF_ERROR_NOMEM;
        c->busy = busy;
        c->capbusy = cap;
    }
    c->busy[c->nbusy++] = broker;
    return SF_OK;
}

static void broker_busy_clear(sf_consumer_t *c, int32_t broker) {
    size_t i;
    for (i = 0; i < c->nbusy; i++) {
        if (c->busy[i] == broker) {
            c->busy[i] = c->busy[--c->nbusy];
            return;
        }
    }
}

static void fetch_done(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                       sf_rbuf_t *body, void *arg) {
    fetch_req_t *fr = arg;
    sf_consumer_t *c = fr->c;
    sf_proto_FetchResponse_t resp;
    sf_arena_t arena;
    int i, t, p, hint = 0;
    (void)broker_id;

    sf_arena_init(&arena, 0);
    if (!err) {
        int rc = sf_proto_FetchResponse_decode(body, version, &arena, &resp);
        if (rc != SF_OK) {
            sf_client_log(cl, SF_LOG_LEVEL_WARNING,
                          "consumer: broker %d: malformed Fetch response (v%d)",
                          (int)fr->broker, (int)version);
            err = SF_ERROR_MALFORMED;
        } else if (resp.ErrorCode) {
            err = sf_client_kerr(resp.ErrorCode);
        }
    }
    if (!err) {
        for (t = 0; t < resp.ResponsesCount; t++) {
            const sf_proto_FetchResponse_FetchableTopicResponse_t *rt = &resp.Responses[t];
            for (p = 0; p < rt->PartitionsCount; p++) {
                const sf_proto_FetchResponse_PartitionData_t *rp = &rt->Partitions[p];
                fetch_ent_t *ent = fetch_find(fr, rt->Topic, rp->PartitionIndex, &hint);
                if (!ent || ent->done)
                    continue;
                ent->done = 1;
                if (ent->part->removed || ent->part->epoch != ent->epoch)
                    continue;
                ent->part->fetching = 0;
                if (ent->part->state == PART_ACTIVE && ent->part->fetch_pos == ent->offset)
                    fetch_partition(c, cl, ent, rp);
            }
        }
    } else if (err != SF_ERROR_DESTROYED) {
        sf_client_log(cl, SF_LOG_LEVEL_DEBUG, "consumer: Fetch to broker %d failed: %s",
                      (int)fr->broker, sf_error_name(err));
    }
    for (i = 0; i < fr->n; i++) {
        fetch_ent_t *ent = &fr->ents[i];
        cpart_t *part = ent->part;
        if (!ent->done && !part->removed && part->epoch == ent->epoch) {
            part->fetching = 0;
            if (err && err != SF_ERROR_DESTROYED)
                fetch_part_failed(c, cl, part, err);
        }
        part_unref(part);
    }
    sf_arena_reset(&arena);
    broker_busy_clear(c, fr->broker);
    fetch_req_free(fr);
    if (err != SF_ERROR_DESTROYED)
        schedule(c, cl);
}

static int cand_cmp(const void *a, const void *b) {
    const fetch_cand_t *x = a, *y = b;
    int r;
    if (x->leader != y->leader)
        return x->leader < y->leader ? -1 : 1;
    if ((r = strcmp(x->part->topic, y->part->topic)) != 0)
        return r;
    return x->part->partition < y->part->partition ? -1 : x->part->partition > y->part->partition;
}

/* One Fetch for @n candidates of the same leader (sorted by topic). */
static void fetch_send(sf_consumer_t *c, sf_client_t *cl, const fetch_cand_t *cands, int n) {
    const sf_clientconf_t *conf = conf_of(cl);
    fetch_req_t *fr = calloc(1, sizeof(*fr));
    int i, ntopics = 0, rc;

    if (fr) {
        fr->ents = calloc((size_t)n, sizeof(*fr->ents));
        fr->fparts = calloc((size_t)n, sizeof(*fr->fparts));
        fr->topics = calloc((size_t)n, sizeof(*fr->topics));
    }
    if (!fr || !fr->ents || !fr->fparts || !fr->topics ||
        broker_busy_set(c, cands[0].leader) != SF_OK) {
        if (fr)
            fetch_req_free(fr);
        for (i = 0; i < n; i++)
            part_retry(cl, cands[i].part, 0);
        return;
    }
    fr->c = c;
    fr->broker = cands[0].leader;
    fr->n = n;
    fr->max_wait = conf->fetch_max_wait_ms;
    fr->min_bytes = conf->fetch_min_bytes;
    fr->max_bytes = conf->fetch_max_bytes;
    for (i = 0; i < n; i++) {
        cpart_t *part = cands[i].part;
        sf_proto_FetchRequest_FetchPartition_t *fp = &fr->fparts[i];
        if (i == 0 || strcmp(part->topic, cands[i - 1].part->topic) != 0) {
            fr->topics[ntopics].Topic = sf_slice_cstr(part->topic);
            fr->topics[ntopics].Partitions = fp;
            ntopics++;
        }
        fr->topics[ntopics - 1].PartitionsCount++;
        fp->Partition = part->partition;
        fp->CurrentLeaderEpoch = -1;
        fp->FetchOffset = part->fetch_pos;
        fp->LogStartOffset = -1;
        fp->PartitionMaxBytes = part->fetch_bytes;
        fr->ents[i].part = part;
        fr->ents[i].epoch = part->epoch;
        fr->ents[i].offset = part->fetch_pos;
        part->refs++;
        part->fetching = 1;
    }
    fr->ntopics = ntopics;
    rc = sf_client_request(cl, fr->broker, SF_PROTO_API_Fetch, 11, fetch_encode, fetch_done, fr,
                           conf->request_timeout_ms + conf->fetch_max_wait_ms, 0);
    if (rc != SF_OK) {
        broker_busy_clear(c, fr->broker);
        for (i = 0; i < n; i++) {
            fr->ents[i].part->fetching = 0;
            part_retry(cl, fr->ents[i].part, 1);
            part_unref(fr->ents[i].part);
        }
        fetch_req_free(fr);
    }
}

/* ------------------------------------------------------------------------------------------
 * The scheduler (I/O thread, lock held): resets and fetches for every partition that can
 * take one now, and a timer for the earliest backoff.
 * ------------------------------------------------------------------------------------------ */

static void timer_cb(evutil_socket_t fd, short what, void *arg) {
    sf_consumer_t *c = arg;
    (void)fd;
    (void)what;
    sf_client_wake(c->cl);
}

static void timer_arm(sf_consumer_t *c, sf_client_t *cl, int64_t at, int64_t now) {
    struct timeval tv;
    int64_t ms = at > now ? at - now : 0;
    if (!c->timer) {
        c->timer = evtimer_new(sf_client_base(cl), timer_cb, c);
        if (!c->timer)
            return;
    }
    tv.tv_sec = (time_t)(ms / 1000);
    tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
    evtimer_add(c->timer, &tv);
}

static void schedule(sf_consumer_t *c, sf_client_t *cl) {
    const sf_clientconf_t *conf = conf_of(cl);
    int64_t now, next;
    size_t i, ncand, limit, start;

    /* No re-entry (from a hook or callback reached while scheduling): run again instead. */
    if (c->in_schedule) {
        c->reschedule = 1;
        return;
    }
    if (c->stopped)
        return;
    c->in_schedule = 1;
    do {
        c->reschedule = 0;
        now = sf_clock_mono_ms();
        next = INT64_MAX;
        limit = part_limit(c, cl);
        if (c->capcands < c->nparts) {
            fetch_cand_t *cands = realloc(c->cands, c->nparts * sizeof(*cands));
            if (!cands)
                break;
            c->cands = cands;
            c->capcands = c->nparts;
        }
        ncand = 0;
        for (i = 0; i < c->nparts; i++) {
            cpart_t *part = c->parts[i];
            int32_t leader;
            if (part->state == PART_PAUSED || part->fetching || part->resetting)
                continue;
            if (part->backoff_until > now && !part->wait_meta) {
                if (part->backoff_until < next)
                    next = part->backoff_until;
                continue;
            }
            leader = part_leader(cl, part, now);
            if (leader < 0) {
                if (part->backoff_until < next)
                    next = part->backoff_until;
                continue;
            }
            part->backoff_until = 0;
            if (part->state == PART_RESET) {
                lo_send(c, cl, part, leader);
                continue;
            }
            if (broker_busy(c, leader))
                continue; /* goes with the next fetch, sent when this one returns */
            c->cands[ncand].leader = leader;
            c->cands[ncand].part = part;
            c->cands[ncand].held =
                part->queued >= limit || c->queued >= (size_t)conf->queued_max_bytes;
            if (c->cands[ncand].held)
                c->throttled = 1;
            ncand++;
        }
        if (ncand > 1)
            qsort(c->cands, ncand, sizeof(*c->cands), cand_cmp);
        for (start = 0, i = 1; i <= ncand; i++) {
            if (i == ncand || c->cands[i].leader != c->cands[start].leader) {
                /* A partition with a full queue holds back its leader's whole fetch: a fetch
                 * for the others alone would most likely park at the broker (they are idle,
                 * or their queues would be full too), and the full partition's next fetch,
                 * due as soon as its queue drains, could only leave when that one returns.
                 * The others are fetched with it then. */
                size_t k;
                int held = 0;
                for (k = start; k < i; k++)
                    held |= c->cands[k].held;
                if (!held)
                    fetch_send(c, cl, c->cands + start, (int)(i - start));
                start = i;
            }
        }
        if (next != INT64_MAX)
            timer_arm(c, cl, next, now);
    } while (c->reschedule && !c->stopped);
    c->in_schedule = 0;
}

/* ------------------------------------------------------------------------------------------
 * Role hooks (I/O thread, lock held)
 * ------------------------------------------------------------------------------------------ */

static void hook_wake(sf_client_t *cl, void *self) {
    schedule(self, cl);
}

static void hook_metadata(sf_client_t *cl, void *self) {
    schedule(self, cl);
}

static void hook_broker(sf_client_t *cl, void *self, int32_t broker_id, int up) {
    (void)broker_id;
    if (up)
        schedule(self, cl);
}

static void hook_stop(sf_client_t *cl, void *self) {
    sf_consumer_t *c = self;
    c->stopped = 1;
    if (c->timer) {
        event_free(c->timer);
        c->timer = NULL;
    }
    sf_client_signal(cl);
}

/* ------------------------------------------------------------------------------------------
 * Public API
 * ------------------------------------------------------------------------------------------ */

sf_consumer_t *sf_consumer_new(const sf_conf_t *conf, char *errstr, size_t errstr_size) {
    sf_client_role_t roles[2];
    sf_consumer_t *c;
    const char *group_id;
    if (!conf) {
        sf_errf(errstr, errstr_size, "no configuration");
        return NULL;
    }
    c = calloc(1, sizeof(*c));
    if (!c) {
        sf_errf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    memset(roles, 0, sizeof(roles));
    roles[0].self = c;
    roles[0].on_wake = hook_wake;
    roles[0].on_metadata = hook_metadata;
    roles[0].on_broker = hook_broker;
    roles[0].on_stop = hook_stop;
    c->pool = sf_consumer_pool_new();
    group_id = sf_conf_get(conf, "group.id");
    if (c->pool && group_id && *group_id && !(c->group = sf_cgroup_new(c, &roles[1]))) {
        sf_errf(errstr, errstr_size, "out of memory");
        goto err;
    }
    if (!c->pool) {
        sf_errf(errstr, errstr_size, "out of memory");
        goto err;
    }
    c->cl = sf_client_new(conf, roles, c->group ? 2 : 1, errstr, errstr_size);
    if (!c->cl || (c->group && sf_cgroup_start(c->group, c->cl, errstr, errstr_size) != SF_OK))
        goto err;
    return c;
err:
    sf_client_destroy(c->cl);
    sf_cgroup_free(c->group);
    sf_consumer_pool_release(c->pool);
    free(c);
    return NULL;
}

static int offset_ok(int64_t offset) {
    return offset >= 0 || offset == SF_OFFSET_BEGINNING || offset == SF_OFFSET_END;
}

/* Point @part at @offset (an offset or BEGINNING/END) or, when @timestamp >= 0, at the first
 * offset of that timestamp. Lock held. */
static void part_seek(sf_consumer_t *c, cpart_t *part, int64_t offset, int64_t timestamp) {
    queue_drop(c, part);
    part->epoch++;
    part->fetching = 0;
    part->resetting = 0;
    part->backoff_until = 0;
    part->wait_meta = 0;
    part->retries = 0;
    part->err = 0;
    part->fetch_bytes = conf_of(c->cl)->max_partition_fetch_bytes;
    if (timestamp >= 0 || offset < 0) {
        part->state = PART_RESET;
        part->reset_to = timestamp >= 0 ? timestamp : offset;
        part->fetch_pos = -1;
    } else {
        part->state = PART_ACTIVE;
        part->fetch_pos = offset;
    }
}

/* Assign @topic/@partition at @offset (lock held); paused with error @err when @err != 0. */
static int part_add(sf_consumer_t *c, const char *topic, int32_t partition, int64_t offset,
                    int err) {
    cpart_t *part;
    if (part_find(c, topic, partition, NULL))
        return SF_ERROR_EXISTS;
    if (c->nparts == c->capparts) {
        size_t cap = c->capparts ? c->capparts * 2 : 8;
        cpart_t **parts = realloc(c->parts, cap * sizeof(*parts));
        if (!parts)
            return SF_ERROR_NOMEM;
        c->parts = parts;
        c->capparts = cap;
    }
    part = calloc(1, sizeof(*part));
    if (!part || !(part->topic = strdup(topic))) {
        free(part);
        return SF_ERROR_NOMEM;
    }
    part->partition = partition;
    part->refs = 1;
    part->epoch = 1;
    part->high_watermark = -1;
    c->parts[c->nparts++] = part;
    part_seek(c, part, offset, -1);
    if (err)
        part_pause(c, c->cl, part, err);
    sf_client_metadata_want(c->cl, topic, 0);
    sf_client_wake(c->cl);
    return SF_OK;
}

/* Unassign @topic/@partition (lock held). */
static int part_remove(sf_consumer_t *c, const char *topic, int32_t partition) {
    size_t idx;
    cpart_t *part = part_find(c, topic, partition, &idx);
    if (!part)
        return SF_ERROR_NOTFOUND;
    c->parts[idx] = c->parts[--c->nparts];
    queue_drop(c, part);
    part->removed = 1;
    part->epoch++;
    part_unref(part);
    /* The other partitions may now queue more. */
    sf_client_wake(c->cl);
    return SF_OK;
}

int sf_consumer_assign(sf_consumer_t *c, const char *topic, int32_t partition, int64_t offset) {
    int rc;
    if (!c || !topic || !*topic || partition < 0 || !offset_ok(offset))
        return SF_ERROR_INVALID;
    sf_client_lock(c->cl);
    rc = c->group && sf_cgroup_subscribed(c->group) ? SF_ERROR_STATE
                                                    : part_add(c, topic, partition, offset, 0);
    sf_client_unlock(c->cl);
    return rc;
}

int sf_consumer_unassign(sf_consumer_t *c, const char *topic, int32_t partition) {
    int rc;
    if (!c || !topic)
        return SF_ERROR_INVALID;
    sf_client_lock(c->cl);
    rc = c->group && sf_cgroup_subscribed(c->group) ? SF_ERROR_STATE
                                                    : part_remove(c, topic, partition);
    sf_client_unlock(c->cl);
    return rc;
}

/* ---- hooks of the group membership (cgroup.c; lock held) ---- */

sf_cgroup_t *sf_consumer_cgroup(sf_consumer_t *c) {
    return c->group;
}

int sf_consumer_group_add(sf_consumer_t *c, const char *topic, int32_t partition, int64_t offset,
                          int err) {
    return part_add(c, topic, partition, offset, err);
}

int sf_consumer_group_remove(sf_consumer_t *c, const char *topic, int32_t partition) {
    return part_remove(c, topic, partition);
}

/* The offset after the last message handed out of @part (-1 while unresolved); the last
 * message of all is left out while @pending (see last_part). */
static int64_t part_position(sf_consumer_t *c, cpart_t *part, int pending) {
    const sf_message_t *m;
    if (pending && c->last_part == part)
        return c->last_offset;
    m = part->qhead ? sf_consumer_chunk_peek(part->qhead) : NULL;
    if (m)
        return m->offset;
    return part->state == PART_RESET ? -1 : part->fetch_pos;
}

int64_t sf_consumer_group_position(sf_consumer_t *c, const char *topic, int32_t partition,
                                   int pending) {
    cpart_t *part = part_find(c, topic, partition, NULL);
    return part ? part_position(c, part, pending) : -1;
}

size_t sf_consumer_group_parts(sf_consumer_t *c, sf_topic_partition_t *out, size_t cap) {
    size_t i;
    for (i = 0; i < c->nparts && i < cap; i++) {
        out[i].topic = c->parts[i]->topic;
        out[i].partition = c->parts[i]->partition;
        out[i].offset = part_position(c, c->parts[i], 0);
        out[i].err = 0;
    }
    return c->nparts;
}

int sf_consumer_polling(sf_consumer_t *c) {
    return c->npollers > 0;
}

int sf_consumer_seek(sf_consumer_t *c, const char *topic, int32_t partition, int64_t offset) {
    cpart_t *part;
    if (!c || !topic || !offset_ok(offset))
        return SF_ERROR_INVALID;
    sf_client_lock(c->cl);
    part = part_find(c, topic, partition, NULL);
    if (part) {
        part_seek(c, part, offset, -1);
        sf_client_wake(c->cl);
    }
    sf_client_unlock(c->cl);
    return part ? SF_OK : SF_ERROR_NOTFOUND;
}

/* The deadline for @timeout_ms from now (-1: none). */
static int64_t deadline_of(int timeout_ms) {
    return timeout_ms < 0 ? -1 : sf_clock_mono_ms() + timeout_ms;
}

int sf_consumer_ms_left(int64_t deadline) {
    int64_t now;
    if (deadline < 0)
        return -1;
    now = sf_clock_mono_ms();
    return (int)(deadline > now ? deadline - now : 1);
}

int sf_consumer_metadata_backoff(sf_client_t *cl, int64_t backoff_ms, int64_t deadline) {
    int64_t until = sf_clock_mono_ms() + backoff_ms;
    sf_client_metadata_stale(cl);
    if (deadline >= 0 && until > deadline)
        until = deadline;
    while (sf_client_wait(cl, until) != SF_ERROR_TIMED_OUT)
        ;
    return deadline >= 0 && sf_clock_mono_ms() >= deadline ? SF_ERROR_TIMED_OUT : SF_OK;
}

/* Wait (lock held) until @part's position is resolved. */
static int part_wait_resolved(sf_consumer_t *c, cpart_t *part, int64_t deadline) {
    int rc = SF_OK;
    part->refs++;
    while (part->state == PART_RESET && !part->removed && !c->stopped) {
        if (sf_client_wait(c->cl, deadline) == SF_ERROR_TIMED_OUT)
            break;
    }
    if (part->removed)
        rc = SF_ERROR_NOTFOUND;
    else if (part->state == PART_RESET)
        rc = c->stopped ? SF_ERROR_DESTROYED : SF_ERROR_TIMED_OUT;
    else if (part->state == PART_PAUSED && part->fetch_pos < 0)
        rc = part->err;
    part_unref(part);
    return rc;
}

int sf_consumer_seek_timestamp(sf_consumer_t *c, const char *topic, int32_t partition,
                               int64_t timestamp_ms, int timeout_ms) {
    cpart_t *part;
    int rc;
    if (!c || !topic || timestamp_ms < 0)
        return SF_ERROR_INVALID;
    sf_client_lock(c->cl);
    part = part_find(c, topic, partition, NULL);
    if (!part) {
        sf_client_unlock(c->cl);
        return SF_ERROR_NOTFOUND;
    }
    part_seek(c, part, SF_OFFSET_END, timestamp_ms);
    sf_client_wake(c->cl);
    rc = part_wait_resolved(c, part, deadline_of(timeout_ms));
    sf_client_unlock(c->cl);
    return rc;
}

int sf_consumer_position(sf_consumer_t *c, const char *topic, int32_t partition,
                         int64_t *offset, int timeout_ms) {
    cpart_t *part;
    int rc;
    if (!c || !topic || !offset)
        return SF_ERROR_INVALID;
    sf_client_lock(c->cl);
    part = part_find(c, topic, partition, NULL);
    if (!part) {
        sf_client_unlock(c->cl);
        return SF_ERROR_NOTFOUND;
    }
    rc = part_wait_resolved(c, part, deadline_of(timeout_ms));
    if (rc == SF_OK) {
        /* The next queued message, else the next offset to fetch. */
        const sf_message_t *m = part->qhead ? sf_consumer_chunk_peek(part->qhead) : NULL;
        *offset = m ? m->offset : part->fetch_pos;
    }
    sf_client_unlock(c->cl);
    return rc;
}

/* Resolve the leader of @topic/@partition by @deadline (lock NOT held). */
static int leader_wait(sf_consumer_t *c, const char *topic, int32_t partition, int64_t deadline,
                       int32_t *leader) {
    sf_client_t *cl = c->cl;
    int rc = SF_OK;
    int retries = 0;
    sf_client_lock(cl);
    for (;;) {
        const sf_client_topic_t *t;
        if ((rc = sf_client_metadata_wait(cl, topic, 0, deadline)) != SF_OK)
            break;
        t = sf_client_topic(cl, topic);
        if (t && !t->err && partition >= t->partition_count) {
            rc = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
            break;
        }
        if (t && !t->err && t->partitions[partition].leader >= 0) {
            *leader = t->partitions[partition].leader;
            break;
        }
        if (t && t->err && !sf_error_retriable(sf_client_kerr(t->err))) {
            rc = sf_client_kerr(t->err);
            break;
        }
        if (t && t->err == SF_KERR_UNKNOWN_TOPIC_OR_PARTITION && retries >= 2) {
            rc = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
            break;
        }
        if ((rc = sf_consumer_metadata_backoff(cl, part_backoff_ms(cl, retries++), deadline)) !=
            SF_OK)
            break;
    }
    sf_client_unlock(cl);
    return rc;
}

/* ListOffsets for one partition and @timestamp, synchronously, retrying leader changes. */
static int list_offset(sf_consumer_t *c, const char *topic, int32_t partition, int64_t timestamp,
                       int64_t deadline, int64_t *offset) {
    int attempts = 0;
    for (;;) {
        lo_req_t lo;
        int32_t leader = -1;
        int rc = leader_wait(c, topic, partition, deadline, &leader);
        if (rc != SF_OK)
            return rc;
        memset(&lo, 0, sizeof(lo));
        lo.c = c;
        lo.topic = topic;
        lo.partition = partition;
        lo.timestamp = timestamp;
        rc = sf_client_call(c->cl, leader, SF_PROTO_API_ListOffsets, 5, lo_encode, lo_decode,
                            &lo, sf_consumer_ms_left(deadline));
        if (rc == SF_OK && lo.kerr)
            rc = sf_client_kerr(lo.kerr);
        if (rc == SF_OK) {
            *offset = lo.offset;
            return SF_OK;
        }
        if (!(sf_error_retriable(rc) || rc == SF_KERR_NOT_LEADER_OR_FOLLOWER) ||
            rc == SF_ERROR_TIMED_OUT || ++attempts > 10)
            return rc;
        sf_client_lock(c->cl);
        sf_client_metadata_stale(c->cl);
        sf_client_unlock(c->cl);
    }
}

int sf_consumer_watermarks(sf_consumer_t *c, const char *topic, int32_t partition,
                           int64_t *low, int64_t *high, int timeout_ms) {
    int64_t deadline, lo = -1, hi = -1;
    int rc;
    if (!c || !topic || partition < 0)
        return SF_ERROR_INVALID;
    deadline = deadline_of(timeout_ms < 0 ? conf_of(c->cl)->request_timeout_ms : timeout_ms);
    rc = list_offset(c, topic, partition, SF_OFFSET_BEGINNING, deadline, &lo);
    if (rc == SF_OK)
        rc = list_offset(c, topic, partition, SF_OFFSET_END, deadline, &hi);
    if (rc == SF_OK) {
        if (low)
            *low = lo;
        if (high)
            *high = hi;
    }
    return rc;
}

/* The next message, round robin over the partitions that have one (lock held). */
static sf_message_t *take_next(sf_consumer_t *c) {
    cpart_t *part;
    while ((part = c->ready_head)) {
        sf_consumer_chunk_t *chunk = part->qhead;
        sf_message_t *m = chunk ? sf_consumer_chunk_take(chunk) : NULL;
        if (m && c->group && !m->err) {
            if (c->last_part)
                part_unref(c->last_part);
            c->last_part = part;
            part->refs++;
            c->last_offset = m->offset;
        }
        if (chunk && sf_consumer_chunk_remaining(chunk) == 0) {
            queue_pop(c, part);
            if (c->throttled) {
                /* Room again: let the scheduler send the fetches it held back. */
                c->throttled = 0;
                sf_client_wake(c->cl);
            }
        }
        ready_remove(c, part);
        if (part->qhead)
            ready_append(c, part);
        if (m)
            return m;
    }
    return NULL;
}

sf_message_t *sf_consumer_poll(sf_consumer_t *c, int timeout_ms) {
    int64_t deadline;
    sf_message_t *m = NULL;
    unsigned gen;
    if (!c)
        return NULL;
    sf_client_lock(c->cl);
    if (c->wake_pending) {
        c->wake_pending = 0;
        sf_client_unlock(c->cl);
        return NULL;
    }
    if (c->group) {
        /* The message handed out last is processed now; rebalance events come first. */
        if (c->last_part) {
            part_unref(c->last_part);
            c->last_part = NULL;
        }
        if ((m = sf_cgroup_poll(c->group))) {
            sf_client_unlock(c->cl);
            return m;
        }
    }
    /* The common case first, without reading the clock. */
    if ((m = take_next(c)) || timeout_ms == 0) {
        sf_client_unlock(c->cl);
        return m;
    }
    deadline = deadline_of(timeout_ms);
    gen = c->wake_gen;
    c->npollers++;
    for (;;) {
        if (c->group && (m = sf_cgroup_poll(c->group)))
            break;
        if ((m = take_next(c)) || c->wake_gen != gen || c->stopped || timeout_ms == 0)
            break;
        if (sf_client_wait(c->cl, deadline) == SF_ERROR_TIMED_OUT) {
            m = take_next(c);
            break;
        }
    }
    c->npollers--;
    sf_client_unlock(c->cl);
    return m;
}

void sf_consumer_wakeup(sf_consumer_t *c) {
    if (!c)
        return;
    sf_client_lock(c->cl);
    if (c->npollers)
        c->wake_gen++;
    else
        c->wake_pending = 1;
    sf_client_signal(c->cl);
    sf_client_unlock(c->cl);
}

void sf_consumer_destroy(sf_consumer_t *c) {
    size_t i;
    if (!c)
        return;
    if (c->group)
        sf_cgroup_close(c->group);
    sf_client_destroy(c->cl);
    sf_cgroup_free(c->group);
    if (c->last_part)
        part_unref(c->last_part);
    for (i = 0; i < c->nparts; i++) {
        queue_drop(c, c->parts[i]);
        part_unref(c->parts[i]);
    }
    free(c->parts);
    free(c->cands);
    free(c->busy);
    sf_consumer_pool_release(c->pool);
    free(c);
}
