/* The client's metadata cache and its refreshes (Metadata requests to any broker). */
#include "metadata.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "conn.h"
#include "err.h"
#include "proto.h"

/* Longest wait between refreshes while followed topics have transient errors. */
#define SF_MD_TRANSIENT_MAX_MS 2000

void sf_md_init(sf_md_t *md) {
    memset(md, 0, sizeof(*md));
    md->controller = -1;
    md->refresh_at = INT64_MAX;
}

static void topic_free(sf_client_topic_t *t) {
    int32_t i;
    if (!t)
        return;
    for (i = 0; i < t->partition_count; i++) {
        free(t->partitions[i].replicas);
        free(t->partitions[i].isr);
    }
    free(t->partitions);
    free(t->name);
    free(t);
}

static void brokers_free(sf_client_broker_t *b, int n) {
    int i;
    for (i = 0; i < n; i++) {
        free(b[i].host);
        free(b[i].rack);
    }
    free(b);
}

void sf_md_free(sf_md_t *md) {
    int i;
    brokers_free(md->brokers, md->nbrokers);
    for (i = 0; i < md->ntopics; i++)
        topic_free(md->topics[i]);
    free(md->topics);
    for (i = 0; i < md->nfollow; i++)
        free(md->follow[i].name);
    free(md->follow);
    free(md->cluster_id);
    sf_md_init(md);
}

/* ------------------------------------------------------------------------------------------
 * Lookups
 * ------------------------------------------------------------------------------------------ */

/* The index of @name in the sorted topic array, or where it would go (*found 0). */
static int topic_index(const sf_md_t *md, const char *name, int *found) {
    int lo = 0, hi = md->ntopics;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(md->topics[mid]->name, name);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

const sf_client_topic_t *sf_client_topic(sf_client_t *cl, const char *name) {
    int found, i;
    if (!name)
        return NULL;
    i = topic_index(&cl->md, name, &found);
    return found ? cl->md.topics[i] : NULL;
}

const sf_client_broker_t *sf_client_broker(sf_client_t *cl, int32_t id) {
    int lo = 0, hi = cl->md.nbrokers;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (cl->md.brokers[mid].id == id)
            return &cl->md.brokers[mid];
        if (cl->md.brokers[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int sf_md_has_broker(sf_client_t *cl, int32_t id) {
    return sf_client_broker(cl, id) != NULL;
}

const sf_client_broker_t *sf_client_brokers(sf_client_t *cl, int *count) {
    *count = cl->md.nbrokers;
    return cl->md.brokers;
}

const sf_client_topic_t *const *sf_client_topics(sf_client_t *cl, int *count) {
    *count = cl->md.ntopics;
    return (const sf_client_topic_t *const *)cl->md.topics;
}

int32_t sf_client_controller(sf_client_t *cl) {
    return cl->md.controller;
}

const char *sf_client_cluster_id(sf_client_t *cl) {
    return cl->md.cluster_id;
}

static sf_md_follow_t *follow_find(sf_md_t *md, const char *name) {
    int i;
    for (i = 0; i < md->nfollow; i++)
        if (strcmp(md->follow[i].name, name) == 0)
            return &md->follow[i];
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Refresh planning
 * ------------------------------------------------------------------------------------------ */

void sf_md_refresh_at(sf_client_t *cl, int64_t at) {
    if (cl->stopping)
        return;
    if (at < cl->md.refresh_at)
        cl->md.refresh_at = at;
    if (!cl->md.inflight && cl->md.refresh_at <= sf_clock_mono_ms())
        sf_client_kick(cl);
}

void sf_client_metadata_stale(sf_client_t *cl) {
    int64_t now = sf_clock_mono_ms(), at = now;
    if (cl->stopping || (!cl->md.ever && cl->md.nfollow == 0))
        return;
    if (cl->md.sent_ms && cl->md.sent_ms + cl->conf->retry_backoff_ms > at)
        at = cl->md.sent_ms + cl->conf->retry_backoff_ms;
    sf_md_refresh_at(cl, at);
}

int sf_client_metadata_want(sf_client_t *cl, const char *name, int autocreate) {
    sf_md_t *md = &cl->md;
    sf_md_follow_t *f;
    const sf_client_topic_t *t;
    int upgraded = 0;
    if (!name || !*name)
        return SF_ERROR_INVALID;
    if (!(f = follow_find(md, name))) {
        if (md->nfollow == md->capfollow) {
            int cap = md->capfollow ? md->capfollow * 2 : 8;
            sf_md_follow_t *nf = realloc(md->follow, (size_t)cap * sizeof(*nf));
            if (!nf)
                return SF_ERROR_NOMEM;
            md->follow = nf;
            md->capfollow = cap;
        }
        f = &md->follow[md->nfollow];
        if (!(f->name = strdup(name)))
            return SF_ERROR_NOMEM;
        f->autocreate = autocreate ? 1 : 0;
        md->nfollow++;
    } else if (autocreate && !f->autocreate) {
        f->autocreate = 1;
        upgraded = 1;
    }
    t = sf_client_topic(cl, name);
    if (!t || (upgraded && t->err != 0))
        sf_md_refresh_at(cl, sf_clock_mono_ms());
    return SF_OK;
}

/* 1 while @t is still being created: LEADER_NOT_AVAILABLE or no partitions yet. (A topic
 * the broker does not know and will not create is final: UNKNOWN_TOPIC_OR_PARTITION.) */
static int topic_settling(const sf_client_topic_t *t) {
    return t->err == SF_KERR_LEADER_NOT_AVAILABLE || (t->err == 0 && t->partition_count == 0);
}

int sf_client_metadata_wait(sf_client_t *cl, const char *name, int autocreate,
                            int64_t deadline_ms) {
    const sf_client_topic_t *t;
    int rc = sf_client_metadata_want(cl, name, autocreate);
    if (rc != SF_OK)
        return rc;
    /* A topic that is being created is cached first with LEADER_NOT_AVAILABLE: wait for the
     * refreshes that follow, up to the deadline. */
    while (!(t = sf_client_topic(cl, name)) || topic_settling(t)) {
        if (cl->stopping)
            return SF_ERROR_DESTROYED;
        if (sf_client_wait(cl, deadline_ms) == SF_ERROR_TIMED_OUT)
            return sf_client_topic(cl, name) ? SF_OK : SF_ERROR_TIMED_OUT;
    }
    return SF_OK;
}

/* ------------------------------------------------------------------------------------------
 * Requests
 * ------------------------------------------------------------------------------------------ */

/* One Metadata request: the topics (borrowed from the follow list, which only grows) and
 * whether the broker may create them, or (@all) every topic. */
typedef struct md_req {
    int autocreate;
    int all;
    int n;
    const char *names[];
} md_req_t;

static int md_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    md_req_t *r = arg;
    sf_proto_MetadataRequest_t req;
    sf_proto_MetadataRequest_MetadataRequestTopic_t *topics = NULL;
    int i, rc;
    memset(&req, 0, sizeof(req));
    if (r->n > 0 && !(topics = calloc((size_t)r->n, sizeof(*topics))))
        return SF_ERR_NOMEM;
    for (i = 0; i < r->n; i++)
        topics[i].Name = sf_slice_cstr(r->names[i]);
    req.TopicsCount = r->all ? -1 : r->n; /* null: all; empty: brokers only (v1+) */
    req.Topics = topics;
    req.AllowAutoTopicCreation = r->autocreate != 0;
    rc = sf_proto_MetadataRequest_encode(wb, version, &req);
    free(topics);
    return rc;
}

/* A usable broker of a response: its id and where it is in the response. */
typedef struct md_bref {
    int32_t id, at;
} md_bref_t;

/* By id, then by position (so that the first listing of an id comes first). */
static int bref_cmp(const void *a, const void *b) {
    const md_bref_t *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

static sf_client_topic_t *topic_build(const sf_proto_MetadataResponse_MetadataResponseTopic_t *mt) {
    sf_client_topic_t *t = calloc(1, sizeof(*t));
    int32_t i, count = mt->PartitionsCount > 0 ? mt->PartitionsCount : 0;
    if (!t)
        return NULL;
    if (!(t->name = sf_slice_strdup(mt->Name)))
        goto err;
    t->err = mt->ErrorCode;
    t->internal = mt->IsInternal;
    if (count > 0 && !(t->partitions = calloc((size_t)count, sizeof(*t->partitions))))
        goto err;
    t->partition_count = count;
    for (i = 0; i < count; i++) {
        t->partitions[i].id = i;
        t->partitions[i].leader = -1;
        t->partitions[i].leader_epoch = -1;
        t->partitions[i].err = SF_KERR_LEADER_NOT_AVAILABLE; /* until the broker lists it */
    }
    for (i = 0; i < mt->PartitionsCount; i++) {
        const sf_proto_MetadataResponse_MetadataResponsePartition_t *mp = &mt->Partitions[i];
        sf_client_partition_t *p;
        if (mp->PartitionIndex < 0 || mp->PartitionIndex >= count)
            continue; /* ids are 0..count-1; anything else is not addressable */
        p = &t->partitions[mp->PartitionIndex];
        /* A partition listed twice: the last listing wins (without leaking the first). */
        free(p->replicas);
        free(p->isr);
        p->replicas = p->isr = NULL;
        p->replica_count = p->isr_count = 0;
        p->leader = mp->LeaderId;
        p->leader_epoch = mp->LeaderEpoch;
        p->err = mp->ErrorCode;
        if (mp->ReplicaNodesCount > 0) {
            if (!(p->replicas = malloc((size_t)mp->ReplicaNodesCount * sizeof(int32_t))))
                goto err;
            memcpy(p->replicas, mp->ReplicaNodes, (size_t)mp->ReplicaNodesCount * sizeof(int32_t));
            p->replica_count = mp->ReplicaNodesCount;
        }
        if (mp->IsrNodesCount > 0) {
            if (!(p->isr = malloc((size_t)mp->IsrNodesCount * sizeof(int32_t))))
                goto err;
            memcpy(p->isr, mp->IsrNodes, (size_t)mp->IsrNodesCount * sizeof(int32_t));
            p->isr_count = mp->IsrNodesCount;
        }
    }
    return t;
err:
    topic_free(t);
    return NULL;
}

/* A topic of a response and where it is in the response. */
typedef struct md_tref {
    sf_client_topic_t *t;
    int32_t at;
} md_tref_t;

/* By name, then by position (so that the last listing of a name comes last). */
static int tref_cmp(const void *a, const void *b) {
    const md_tref_t *x = a, *y = b;
    int c = strcmp(x->t->name, y->t->name);
    if (c != 0)
        return c;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Put the @n topics of @refs (taken over) into the cache, replacing cached ones of the same
 * name; of a name listed twice the last listing wins. Sorted and merged, not inserted one by
 * one: the count comes from the wire. */
static int topics_merge(sf_md_t *md, md_tref_t *refs, int n) {
    sf_client_topic_t **all;
    int i, j = 0, k = 0, m = 0;
    if (n > 1)
        qsort(refs, (size_t)n, sizeof(*refs), tref_cmp);
    for (i = 0; i < n; i++) {
        if (i + 1 < n && strcmp(refs[i].t->name, refs[i + 1].t->name) == 0)
            topic_free(refs[i].t);
        else
            refs[m++] = refs[i];
    }
    if (m == 0)
        return SF_OK;
    if (!(all = malloc(((size_t)md->ntopics + (size_t)m) * sizeof(*all)))) {
        for (i = 0; i < m; i++)
            topic_free(refs[i].t);
        return SF_ERR_NOMEM;
    }
    for (i = 0; i < md->ntopics || j < m;) {
        int c = i == md->ntopics ? 1 : j == m ? -1 : strcmp(md->topics[i]->name, refs[j].t->name);
        if (c < 0) {
            all[k++] = md->topics[i++];
        } else {
            if (c == 0)
                topic_free(md->topics[i++]);
            all[k++] = refs[j++].t;
        }
    }
    free(md->topics);
    md->topics = all;
    md->ntopics = k;
    return SF_OK;
}

/* After a response listing every topic (md->seq): drop the cached topics it did not list
 * (deleted) unless followed, whose own requests report them. */
static void topics_sweep(sf_md_t *md) {
    int i, k = 0;
    for (i = 0; i < md->ntopics; i++) {
        sf_client_topic_t *t = md->topics[i];
        if (t->seen != md->seq && !follow_find(md, t->name))
            topic_free(t);
        else
            md->topics[k++] = t;
    }
    md->ntopics = k;
}

/* Connections follow the broker list: retire those whose broker left, move those whose
 * address changed, give bootstrap connections the id of the broker they reach, and close
 * idle bootstrap connections that match no broker. */
static void conns_update(sf_client_t *cl) {
    int i, j;
    for (i = 0; i < cl->nconns; i++) {
        sf_conn_t *conn = cl->conns[i];
        const sf_client_broker_t *b;
        if (conn->dead || conn->id < 0)
            continue;
        if (!(b = sf_client_broker(cl, SF_CLIENT_BROKER_OF(conn->id))))
            sf_conn_retire(conn);
        else
            sf_conn_set_addr(conn, b->host, b->port);
    }
    for (i = 0; i < cl->nconns; i++) {
        sf_conn_t *conn = cl->conns[i];
        int matched = 0;
        if (conn->dead || conn->id >= 0)
            continue;
        for (j = 0; j < cl->md.nbrokers; j++) {
            const sf_client_broker_t *b = &cl->md.brokers[j];
            if (b->port == conn->port && strcmp(b->host, conn->host) == 0 &&
                !sf_client_conn_find(cl, b->id)) {
                conn->id = b->id;
                matched = 1;
                sf_client_log(cl, SF_LOG_LEVEL_DEBUG, "bootstrap server %s:%d is broker %d",
                              conn->host, conn->port, (int)b->id);
                if (conn->state == SF_CONN_UP)
                    sf_client_roles_broker(cl, conn->id, 1);
                break;
            }
        }
        if (!matched)
            sf_conn_close_idle(conn);
    }
}

/* 1 if topic @name, asked for in the last request, is not usable yet for a reason that a
 * refresh soon may fix (being created, leader election). */
static int topic_transient(sf_client_t *cl, const char *name) {
    const sf_client_topic_t *t = sf_client_topic(cl, name);
    sf_md_follow_t *f = follow_find(&cl->md, name);
    int32_t i;
    if (!t)
        return 1;
    if (t->err == SF_KERR_LEADER_NOT_AVAILABLE ||
        (t->err == SF_KERR_UNKNOWN_TOPIC_OR_PARTITION && f && f->autocreate))
        return 1;
    if (t->err)
        return 0;
    for (i = 0; i < t->partition_count; i++)
        if (t->partitions[i].leader < 0 || t->partitions[i].err == SF_KERR_LEADER_NOT_AVAILABLE)
            return 1;
    return 0;
}

static void md_apply(sf_client_t *cl, const sf_proto_MetadataResponse_t *resp, const md_req_t *r) {
    sf_md_t *md = &cl->md;
    sf_client_broker_t *nb = NULL;
    int32_t i;
    int k = 0, transient = 0;
    int64_t now = sf_clock_mono_ms();

    md_bref_t *refs = NULL;
    int nrefs = 0, j;

    /* The usable brokers sorted by id, the first listing of an id kept (sorting, not a
     * pairwise search: the count comes from the wire). */
    if (resp->BrokersCount > 0 &&
        (!(refs = malloc((size_t)resp->BrokersCount * sizeof(*refs))) ||
         !(nb = calloc((size_t)resp->BrokersCount, sizeof(*nb))))) {
        free(refs);
        sf_client_log(cl, SF_LOG_LEVEL_ERR, "out of memory for metadata");
        return;
    }
    for (i = 0; i < resp->BrokersCount; i++) {
        const sf_proto_MetadataResponse_MetadataResponseBroker_t *mb = &resp->Brokers[i];
        if (mb->NodeId < 0 || mb->Host.len <= 0 || mb->Port <= 0 || mb->Port > 65535)
            continue;
        refs[nrefs].id = mb->NodeId;
        refs[nrefs].at = i;
        nrefs++;
    }
    if (nrefs > 1)
        qsort(refs, (size_t)nrefs, sizeof(*refs), bref_cmp);
    for (j = 0; j < nrefs; j++) {
        const sf_proto_MetadataResponse_MetadataResponseBroker_t *mb = &resp->Brokers[refs[j].at];
        if (k > 0 && nb[k - 1].id == mb->NodeId)
            continue;
        nb[k].id = mb->NodeId;
        nb[k].port = mb->Port;
        nb[k].host = sf_slice_strdup(mb->Host);
        nb[k].rack = mb->Rack.len >= 0 ? sf_slice_strdup(mb->Rack) : NULL;
        if (!nb[k].host || (mb->Rack.len >= 0 && !nb[k].rack)) {
            brokers_free(nb, k + 1);
            free(refs);
            sf_client_log(cl, SF_LOG_LEVEL_ERR, "out of memory for metadata");
            return;
        }
        k++;
    }
    free(refs);
    if (k > 0) {
        /* An empty broker list (a broker cut off from the cluster) keeps the known one. */
        brokers_free(md->brokers, md->nbrokers);
        md->brokers = nb;
        md->nbrokers = k;
    } else {
        free(nb);
    }
    md->controller = resp->ControllerId;
    free(md->cluster_id);
    md->cluster_id = resp->ClusterId.len >= 0 ? sf_slice_strdup(resp->ClusterId) : NULL;
    if (resp->TopicsCount > 0) {
        md_tref_t *trefs = malloc((size_t)resp->TopicsCount * sizeof(*trefs));
        int ntrefs = 0, oom = !trefs;
        for (i = 0; trefs && i < resp->TopicsCount; i++) {
            if (resp->Topics[i].Name.len <= 0)
                continue;
            if (!(trefs[ntrefs].t = topic_build(&resp->Topics[i]))) {
                oom = 1;
                continue;
            }
            trefs[ntrefs].t->seen = md->seq + 1;
            trefs[ntrefs++].at = i;
        }
        if (trefs && topics_merge(md, trefs, ntrefs) != SF_OK)
            oom = 1;
        free(trefs);
        if (oom)
            sf_client_log(cl, SF_LOG_LEVEL_ERR, "out of memory for metadata");
    }
    md->ever = 1;
    md->seq++;
    md->updated_ms = now;
    if (r->all)
        topics_sweep(md);

    for (i = 0; i < r->n; i++)
        transient |= topic_transient(cl, r->names[i]);
    if (transient) {
        int64_t delay = cl->conf->retry_backoff_ms;
        int s = md->transient < 4 ? md->transient : 4;
        md->transient++;
        delay <<= s;
        if (delay > SF_MD_TRANSIENT_MAX_MS)
            delay = SF_MD_TRANSIENT_MAX_MS;
        sf_md_refresh_at(cl, now + delay);
    } else {
        md->transient = 0;
    }
    if (md->nfollow > 0 || md->all_topics)
        sf_md_refresh_at(cl, now + cl->conf->metadata_max_age_ms);
    if (k > 0)
        conns_update(cl);
}

static void md_response(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                        sf_rbuf_t *body, void *arg) {
    md_req_t *r = arg;
    sf_proto_MetadataResponse_t resp;
    sf_arena_t arena;
    int64_t now = sf_clock_mono_ms();

    cl->md.inflight--;
    if (err) {
        if (!cl->stopping) {
            sf_client_log(cl, SF_LOG_LEVEL_DEBUG, "metadata request to broker %d failed: %s",
                          (int)broker_id, sf_error_str(err));
            if (cl->md.nfollow > 0 || cl->md.all_topics || cl->pending.n > 0)
                sf_md_refresh_at(cl, now + cl->conf->retry_backoff_ms);
        }
        free(r);
        return;
    }
    sf_arena_init(&arena, 0);
    if (sf_proto_MetadataResponse_decode(body, version, &arena, &resp) != SF_OK) {
        sf_client_log(cl, SF_LOG_LEVEL_WARNING, "broker %d: malformed Metadata v%d response",
                      (int)broker_id, (int)version);
        sf_md_refresh_at(cl, now + cl->conf->retry_backoff_ms);
    } else {
        md_apply(cl, &resp, r);
        sf_client_kick(cl); /* route requests that waited for brokers or the controller */
        sf_client_roles_metadata(cl);
        sf_client_signal(cl);
    }
    sf_arena_reset(&arena);
    free(r);
}

/* Send a request for the followed topics with this @autocreate (@n of them), or (@n -1)
 * for every topic. */
static int md_send(sf_client_t *cl, int autocreate, int n) {
    md_req_t *r = malloc(sizeof(*r) + (size_t)(n > 0 ? n : 0) * sizeof(r->names[0]));
    int i, rc;
    if (!r)
        return SF_ERR_NOMEM;
    r->autocreate = autocreate;
    r->all = n < 0;
    r->n = 0;
    for (i = 0; i < cl->md.nfollow && !r->all; i++)
        if (cl->md.follow[i].autocreate == autocreate)
            r->names[r->n++] = cl->md.follow[i].name;
    rc = sf_client_request(cl, SF_CLIENT_ANY_BROKER, SF_PROTO_API_Metadata, 8, md_encode,
                           md_response, r, -1, 0);
    if (rc != SF_OK) {
        free(r);
        return rc;
    }
    cl->md.inflight++;
    return SF_OK;
}

void sf_md_service(sf_client_t *cl, int64_t now) {
    sf_md_t *md = &cl->md;
    int i, nauto = 0, nplain = 0;
    if (cl->stopping || md->inflight > 0 || md->refresh_at > now)
        return;
    md->refresh_at = INT64_MAX;
    md->sent_ms = now;
    for (i = 0; i < md->nfollow; i++) {
        if (md->follow[i].autocreate)
            nauto++;
        else
            nplain++;
    }
    /* Topics that may be created and those that may not go in separate requests, since
     * AllowAutoTopicCreation is per request. */
    if ((nplain > 0 || (nauto == 0 && !md->all_topics)) && md_send(cl, 0, nplain) != SF_OK)
        md->refresh_at = now + cl->conf->retry_backoff_ms;
    if (nauto > 0 && md_send(cl, 1, nauto) != SF_OK)
        md->refresh_at = now + cl->conf->retry_backoff_ms;
    if (md->all_topics && md_send(cl, 0, -1) != SF_OK)
        md->refresh_at = now + cl->conf->retry_backoff_ms;
}

void sf_client_metadata_all(sf_client_t *cl, int on) {
    if (cl->md.all_topics == (on != 0))
        return;
    cl->md.all_topics = on != 0;
    if (on)
        sf_md_refresh_at(cl, sf_clock_mono_ms());
}
