/* OffsetCommit, TxnOffsetCommit and OffsetFetch on the group coordinator (metadata thread).
 * A commit names partitions that exist (UNKNOWN_TOPIC_OR_PARTITION otherwise, as Kafka) and
 * is answered once ZooKeeper has it (group/coordinator.c; a transaction's stays pending until
 * its marker, group/txnoffsets.c); a fetch answers from the coordinator's memory, for one
 * group (v0-7) or many (v8+), the listed partitions or every committed one, with
 * UNSTABLE_OFFSET_COMMIT (v7+, RequireStable) for a partition a transaction holds.
 * A transactional commit is first verified with the transaction coordinator (KIP-890, as
 * Kafka's group coordinator does): the group's offsets partition must be in the producer's
 * ongoing transaction (AddOffsetsToTxn put it there), so a zombie's late commit after its
 * transaction ended stays out. */
#include "dispatch.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "brokercfg.h"
#include "group.h"
#include "verify.h"

#define SAME_LAYOUT(a, b, f) _Static_assert(offsetof(a, f) == offsetof(b, f), #f)

typedef sf_proto_OffsetCommitResponse_OffsetCommitResponsePartition_t commit_rp_t;
typedef sf_proto_OffsetCommitRequest_OffsetCommitRequestPartition_t commit_p_t;

static const char *group_name(sf_kreq_t *kr, sf_slice_t s) {
    return s.p && s.len > 0 ? sf_kreq_str(kr, s) : "";
}

/* ---- OffsetCommit ---- */

typedef struct commit_ctx {
    sf_kreq_t *kr;
    sf_proto_OffsetCommitResponse_t resp;
    const void *answer; /* the response sent: &resp, or TxnOffsetCommit's */
    commit_rp_t **slot; /* the response partition of each item written */
    sf_goffset_t *items;
    int n;
} commit_ctx_t;

static void commit_answer(void *arg, int16_t error, const int16_t *errs) {
    commit_ctx_t *cc = arg;
    int i;
    for (i = 0; i < cc->n; i++)
        cc->slot[i]->ErrorCode = errs ? errs[i] : error;
    sf_kreq_respond(cc->kr, cc->answer);
}

static int commit_alloc(sf_kreq_t *kr, commit_ctx_t *cc, int total) {
    cc->kr = kr;
    cc->answer = &cc->resp;
    return (cc->slot = sf_kreq_alloc(kr, (size_t)total, sizeof(*cc->slot))) &&
                   (cc->items = sf_kreq_alloc(kr, (size_t)total, sizeof(*cc->items)))
               ? SF_OK
               : SF_ERR_NOMEM;
}

/* One partition of a commit: UNKNOWN_TOPIC_OR_PARTITION in @sp unless it exists (@ct), else
 * an item answered in @sp. */
static int commit_item(commit_ctx_t *cc, const char *topic, const sf_cluster_topic_t *ct,
                       int32_t partition, int64_t offset, int32_t leader_epoch,
                       sf_slice_t metadata, commit_rp_t *sp) {
    sf_goffset_t *it = &cc->items[cc->n];
    sp->PartitionIndex = partition;
    if (!ct || partition < 0 || partition >= ct->npartitions) {
        sp->ErrorCode = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
        return SF_OK;
    }
    it->topic = topic;
    it->partition = partition;
    it->offset = offset;
    it->leader_epoch = leader_epoch;
    it->metadata = metadata.p && metadata.len > 0 ? sf_kreq_str(cc->kr, metadata) : "";
    if (!it->metadata)
        return SF_ERR_NOMEM;
    cc->slot[cc->n++] = sp;
    return SF_OK;
}

static const sf_cluster_topic_t *commit_topic(sf_kreq_t *kr, sf_slice_t name, const char **topic) {
    *topic = sf_kreq_str(kr, name);
    return *topic ? sf_cluster_snapshot_topic(kr->snap, *topic) : NULL;
}

/* The response skeleton, with UNKNOWN_TOPIC_OR_PARTITION where it applies; the other
 * partitions become items. */
static int commit_build(sf_kreq_t *kr, commit_ctx_t *cc,
                        const sf_proto_OffsetCommitRequest_t *req) {
    int t, p, total = 0;
    cc->resp.TopicsCount = req->TopicsCount > 0 ? req->TopicsCount : 0;
    for (t = 0; t < cc->resp.TopicsCount; t++)
        total += req->Topics[t].PartitionsCount > 0 ? req->Topics[t].PartitionsCount : 0;
    cc->resp.Topics = sf_kreq_alloc(kr, (size_t)cc->resp.TopicsCount, sizeof(*cc->resp.Topics));
    if (!cc->resp.Topics || commit_alloc(kr, cc, total) != SF_OK)
        return SF_ERR_NOMEM;
    for (t = 0; t < cc->resp.TopicsCount; t++) {
        const sf_proto_OffsetCommitRequest_OffsetCommitRequestTopic_t *rt = &req->Topics[t];
        sf_proto_OffsetCommitResponse_OffsetCommitResponseTopic_t *st = &cc->resp.Topics[t];
        const char *topic;
        const sf_cluster_topic_t *ct = commit_topic(kr, rt->Name, &topic);
        sf_proto_OffsetCommitResponse_OffsetCommitResponseTopic_init(st);
        st->Name = rt->Name;
        st->PartitionsCount = rt->PartitionsCount > 0 ? rt->PartitionsCount : 0;
        if (!(st->Partitions = sf_kreq_alloc(kr, (size_t)st->PartitionsCount, sizeof(commit_rp_t))))
            return SF_ERR_NOMEM;
        for (p = 0; p < st->PartitionsCount; p++) {
            const commit_p_t *rp = &rt->Partitions[p];
            sf_proto_OffsetCommitResponse_OffsetCommitResponsePartition_init(&st->Partitions[p]);
            if (commit_item(cc, topic, ct, rp->PartitionIndex, rp->CommittedOffset,
                            kr->version >= 6 ? rp->CommittedLeaderEpoch : -1,
                            rp->CommittedMetadata, &st->Partitions[p]) != SF_OK)
                return SF_ERR_NOMEM;
        }
    }
    return SF_OK;
}

static void commit_run(void *arg, sf_group_t *g, int16_t err) {
    commit_ctx_t *cc = arg;
    sf_kreq_t *kr = cc->kr;
    const sf_proto_OffsetCommitRequest_t *req = kr->msg;
    const char *member = kr->version >= 1 ? group_name(kr, req->MemberId) : "";
    const char *instance = kr->version >= 7 && req->GroupInstanceId.p
                               ? sf_kreq_str(kr, req->GroupInstanceId) : NULL;
    if (!g || !member) {
        commit_answer(cc, g ? SF_KERR_UNKNOWN_SERVER_ERROR : err, NULL);
        return;
    }
    if (!cc->n) {
        sf_kreq_respond(kr, cc->answer);
        return;
    }
    sf_group_commit(g, member, instance, kr->version >= 1 ? req->GenerationIdOrMemberEpoch : -1,
                    cc->items, cc->n, commit_answer, cc);
}

void sf_kapi_OffsetCommit(sf_kreq_t *kr, void *msg) {
    const sf_proto_OffsetCommitRequest_t *req = msg;
    sf_coord_t *c = sf_broker_coordinator(kr->b);
    commit_ctx_t *cc = sf_kreq_alloc(kr, 1, sizeof(*cc));
    const char *group = group_name(kr, req->GroupId);
    if (!cc || !group) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    sf_proto_OffsetCommitResponse_init(&cc->resp);
    if (commit_build(kr, cc, req) != SF_OK) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    if (!c)
        commit_answer(cc, SF_KERR_COORDINATOR_NOT_AVAILABLE, NULL);
    else
        sf_coord_with_group(c, group, commit_run, cc);
}

/* ---- TxnOffsetCommit ---- */

/* Its answer's partitions are filled as OffsetCommit's, whose layout they share. */
typedef sf_proto_TxnOffsetCommitResponse_TxnOffsetCommitResponsePartition_t txn_rp_t;
SAME_LAYOUT(txn_rp_t, commit_rp_t, PartitionIndex);
SAME_LAYOUT(txn_rp_t, commit_rp_t, ErrorCode);
_Static_assert(sizeof(txn_rp_t) == sizeof(commit_rp_t), "partition layouts");

typedef struct txn_commit_ctx {
    commit_ctx_t cc;
    sf_proto_TxnOffsetCommitResponse_t resp;
    const char *group;
    sf_txn_tp_t offsets_part; /* the group's partition of the transaction, verified */
    int16_t verify_err;
    sf_mail_t home;
} txn_commit_ctx_t;

static int txn_commit_build(sf_kreq_t *kr, txn_commit_ctx_t *tc,
                            const sf_proto_TxnOffsetCommitRequest_t *req) {
    int t, p, total = 0;
    tc->resp.TopicsCount = req->TopicsCount > 0 ? req->TopicsCount : 0;
    for (t = 0; t < tc->resp.TopicsCount; t++)
        total += req->Topics[t].PartitionsCount > 0 ? req->Topics[t].PartitionsCount : 0;
    tc->resp.Topics = sf_kreq_alloc(kr, (size_t)tc->resp.TopicsCount, sizeof(*tc->resp.Topics));
    if (!tc->resp.Topics || commit_alloc(kr, &tc->cc, total) != SF_OK)
        return SF_ERR_NOMEM;
    tc->cc.answer = &tc->resp;
    for (t = 0; t < tc->resp.TopicsCount; t++) {
        const sf_proto_TxnOffsetCommitRequest_TxnOffsetCommitRequestTopic_t *rt = &req->Topics[t];
        sf_proto_TxnOffsetCommitResponse_TxnOffsetCommitResponseTopic_t *st = &tc->resp.Topics[t];
        const char *topic;
        const sf_cluster_topic_t *ct = commit_topic(kr, rt->Name, &topic);
        sf_proto_TxnOffsetCommitResponse_TxnOffsetCommitResponseTopic_init(st);
        st->Name = rt->Name;
        st->PartitionsCount = rt->PartitionsCount > 0 ? rt->PartitionsCount : 0;
        if (!(st->Partitions = sf_kreq_alloc(kr, (size_t)st->PartitionsCount, sizeof(txn_rp_t))))
            return SF_ERR_NOMEM;
        for (p = 0; p < st->PartitionsCount; p++) {
            const sf_proto_TxnOffsetCommitRequest_TxnOffsetCommitRequestPartition_t *rp =
                &rt->Partitions[p];
            sf_proto_TxnOffsetCommitResponse_TxnOffsetCommitResponsePartition_init(&st->Partitions[p]);
            if (commit_item(&tc->cc, topic, ct, rp->PartitionIndex, rp->CommittedOffset,
                            kr->version >= 2 ? rp->CommittedLeaderEpoch : -1, rp->CommittedMetadata,
                            (commit_rp_t *)&st->Partitions[p]) != SF_OK)
                return SF_ERR_NOMEM;
        }
    }
    return SF_OK;
}

static void txn_commit_run(void *arg, sf_group_t *g, int16_t err) {
    txn_commit_ctx_t *tc = arg;
    sf_kreq_t *kr = tc->cc.kr;
    const sf_proto_TxnOffsetCommitRequest_t *req = kr->msg;
    sf_gtxn_t who = {kr->version >= 3 ? group_name(kr, req->MemberId) : "",
                     kr->version >= 3 && req->GroupInstanceId.p
                         ? sf_kreq_str(kr, req->GroupInstanceId) : NULL,
                     kr->version >= 3 ? req->GenerationId : -1, req->ProducerId,
                     req->ProducerEpoch};
    if (!g || !who.member_id) {
        commit_answer(&tc->cc, g ? SF_KERR_UNKNOWN_SERVER_ERROR : err, NULL);
        return;
    }
    if (!tc->cc.n) {
        sf_kreq_respond(kr, &tc->resp);
        return;
    }
    sf_group_txn_commit(g, &who, tc->cc.items, tc->cc.n, commit_answer, &tc->cc);
}

/* Back on the metadata thread with the transaction coordinator's answer. */
static void txn_commit_verified(void *arg) {
    txn_commit_ctx_t *tc = arg;
    sf_coord_t *c = sf_broker_coordinator(tc->cc.kr->b);
    int16_t err = tc->verify_err;
    if (sf_txn_verify_retriable(err))
        err = SF_KERR_COORDINATOR_LOAD_IN_PROGRESS; /* retried by every client */
    else if (err == SF_KERR_PRODUCER_FENCED)
        err = SF_KERR_INVALID_PRODUCER_EPOCH;
    if (err == SF_KERR_NONE && !c)
        err = SF_KERR_COORDINATOR_NOT_AVAILABLE;
    if (err != SF_KERR_NONE)
        commit_answer(&tc->cc, err, NULL);
    else
        sf_coord_with_group(c, tc->group, txn_commit_run, tc);
}

/* The answer, on the inter-broker client's thread. */
static void txn_commit_answered(void *arg, const int16_t *errs) {
    txn_commit_ctx_t *tc = arg;
    tc->verify_err = errs ? errs[0] : SF_KERR_COORDINATOR_NOT_AVAILABLE;
    tc->home.fn = txn_commit_verified;
    tc->home.arg = tc;
    tc->home.heap = 0;
    sf_broker_to_metadata(tc->cc.kr->b, &tc->home);
}

static void txn_commit_verify(sf_kreq_t *kr, txn_commit_ctx_t *tc,
                              const sf_proto_TxnOffsetCommitRequest_t *req) {
    const char *txn_id = sf_kreq_str(kr, req->TransactionalId);
    int nbuckets = kr->snap ? kr->snap->ngroup_buckets : 0;
    tc->offsets_part.topic = "__consumer_offsets";
    tc->offsets_part.partition =
        nbuckets > 0 ? sf_coord_bucket_of(tc->group, strlen(tc->group), nbuckets) : 0;
    if (!txn_id || sf_broker_verify_txn(kr->b, kr->snap, txn_id, req->ProducerId,
                                        req->ProducerEpoch, &tc->offsets_part, 1,
                                        SF_TXN_VERIFY_TIMEOUT_MS, txn_commit_answered,
                                        tc) != SF_OK)
        txn_commit_answered(tc, NULL);
}

void sf_kapi_TxnOffsetCommit(sf_kreq_t *kr, void *msg) {
    const sf_proto_TxnOffsetCommitRequest_t *req = msg;
    sf_coord_t *c = sf_broker_coordinator(kr->b);
    txn_commit_ctx_t *tc = sf_kreq_alloc(kr, 1, sizeof(*tc));
    const char *group = group_name(kr, req->GroupId);
    if (!tc || !group) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    sf_proto_TxnOffsetCommitResponse_init(&tc->resp);
    if (txn_commit_build(kr, tc, req) != SF_OK) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    tc->group = group;
    if (!c)
        commit_answer(&tc->cc, SF_KERR_COORDINATOR_NOT_AVAILABLE, NULL);
    else if (tc->cc.n && sf_broker_cfg(kr->b)->txn_verification_enable)
        txn_commit_verify(kr, tc, req);
    else
        sf_coord_with_group(c, group, txn_commit_run, tc);
}

/* ---- OffsetFetch ---- */

/* One group's answer, in the v8 shape; v0-7 answers use the same structs, whose layouts the
 * generated code makes identical (checked here). */
SAME_LAYOUT(sf_proto_OffsetFetchResponse_OffsetFetchResponsePartition_t,
            sf_proto_OffsetFetchResponse_OffsetFetchResponsePartitions_t, ErrorCode);
SAME_LAYOUT(sf_proto_OffsetFetchResponse_OffsetFetchResponsePartition_t,
            sf_proto_OffsetFetchResponse_OffsetFetchResponsePartitions_t, Metadata);
SAME_LAYOUT(sf_proto_OffsetFetchResponse_OffsetFetchResponseTopic_t,
            sf_proto_OffsetFetchResponse_OffsetFetchResponseTopics_t, Partitions);
SAME_LAYOUT(sf_proto_OffsetFetchRequest_OffsetFetchRequestTopic_t,
            sf_proto_OffsetFetchRequest_OffsetFetchRequestTopics_t, PartitionIndexes);
_Static_assert(sizeof(sf_proto_OffsetFetchResponse_OffsetFetchResponsePartition_t) ==
                   sizeof(sf_proto_OffsetFetchResponse_OffsetFetchResponsePartitions_t),
               "partition layouts");
_Static_assert(sizeof(sf_proto_OffsetFetchResponse_OffsetFetchResponseTopic_t) ==
                   sizeof(sf_proto_OffsetFetchResponse_OffsetFetchResponseTopics_t),
               "topic layouts");
_Static_assert(sizeof(sf_proto_OffsetFetchRequest_OffsetFetchRequestTopic_t) ==
                   sizeof(sf_proto_OffsetFetchRequest_OffsetFetchRequestTopics_t),
               "request topic layouts");

typedef sf_proto_OffsetFetchResponse_OffsetFetchResponseGroup_t fetch_group_t;
typedef sf_proto_OffsetFetchResponse_OffsetFetchResponseTopics_t fetch_topic_t;
typedef sf_proto_OffsetFetchResponse_OffsetFetchResponsePartitions_t fetch_part_t;

typedef struct fetch_ctx {
    sf_kreq_t *kr;
    fetch_group_t *groups;
    int ngroups, pending;
} fetch_ctx_t;

typedef struct fetch_one {
    fetch_ctx_t *fc;
    int index;
    const sf_proto_OffsetFetchRequest_OffsetFetchRequestTopics_t *topics; /* NULL: all */
    int ntopics;
} fetch_one_t;

static void part_fill(sf_kreq_t *kr, fetch_part_t *fp, const sf_goffset_t *o) {
    sf_proto_OffsetFetchResponse_OffsetFetchResponsePartitions_init(fp);
    fp->PartitionIndex = o->partition;
    fp->CommittedOffset = o->offset;
    fp->CommittedLeaderEpoch = o->leader_epoch;
    fp->Metadata = sf_kreq_slice(kr, o->metadata ? o->metadata : "");
}

/* Every committed offset of the group: counted, then filled topic by topic. */
typedef struct all_fill {
    sf_kreq_t *kr;
    fetch_group_t *fg;
    int count, err;
} all_fill_t;

static void count_cb(void *arg, const sf_goffset_t *o) {
    (void)o;
    ((all_fill_t *)arg)->count++;
}

static void all_cb(void *arg, const sf_goffset_t *o) {
    all_fill_t *af = arg;
    fetch_group_t *fg = af->fg;
    fetch_topic_t *ft = fg->TopicsCount ? &fg->Topics[fg->TopicsCount - 1] : NULL;
    if (af->err)
        return;
    if (!ft || ft->Name.len != (int32_t)strlen(o->topic) ||
        memcmp(ft->Name.p, o->topic, (size_t)ft->Name.len)) {
        ft = &fg->Topics[fg->TopicsCount++];
        sf_proto_OffsetFetchResponse_OffsetFetchResponseTopics_init(ft);
        ft->Name = sf_kreq_slice(af->kr, o->topic);
        /* at most every remaining offset belongs to this topic */
        ft->Partitions = sf_kreq_alloc(af->kr, (size_t)af->count, sizeof(fetch_part_t));
        if (!ft->Partitions) {
            af->err = 1;
            return;
        }
    }
    part_fill(af->kr, &ft->Partitions[ft->PartitionsCount++], o);
    af->count--;
}

static int fill_all(sf_kreq_t *kr, fetch_group_t *fg, const sf_group_t *g) {
    all_fill_t af = {kr, fg, 0, 0};
    sf_group_offsets(g, count_cb, &af);
    if (!(fg->Topics = sf_kreq_alloc(kr, (size_t)af.count, sizeof(fetch_topic_t))))
        return SF_ERR_NOMEM;
    sf_group_offsets(g, all_cb, &af);
    return af.err ? SF_ERR_NOMEM : SF_OK;
}

static int fill_listed(sf_kreq_t *kr, fetch_group_t *fg, const fetch_one_t *one,
                       const sf_group_t *g) {
    const sf_proto_OffsetFetchRequest_t *req = kr->msg;
    int t, p, stable = kr->version >= 7 && req->RequireStable;
    fg->TopicsCount = one->ntopics;
    if (!(fg->Topics = sf_kreq_alloc(kr, (size_t)one->ntopics, sizeof(fetch_topic_t))))
        return SF_ERR_NOMEM;
    for (t = 0; t < one->ntopics; t++) {
        const sf_proto_OffsetFetchRequest_OffsetFetchRequestTopics_t *rt = &one->topics[t];
        fetch_topic_t *ft = &fg->Topics[t];
        const char *topic = sf_kreq_str(kr, rt->Name);
        int np = rt->PartitionIndexesCount > 0 ? rt->PartitionIndexesCount : 0;
        sf_proto_OffsetFetchResponse_OffsetFetchResponseTopics_init(ft);
        ft->Name = rt->Name;
        if (!topic || !(ft->Partitions = sf_kreq_alloc(kr, (size_t)np, sizeof(fetch_part_t))))
            return SF_ERR_NOMEM;
        ft->PartitionsCount = np;
        for (p = 0; p < np; p++) {
            sf_goffset_t none = {topic, rt->PartitionIndexes[p], -1, -1, ""};
            int unstable = g && stable && sf_group_offset_unstable(g, topic, none.partition);
            sf_goffset_t o = g && !unstable ? sf_group_offset(g, topic, none.partition) : none;
            part_fill(kr, &ft->Partitions[p], &o);
            if (unstable)
                ft->Partitions[p].ErrorCode = SF_KERR_UNSTABLE_OFFSET_COMMIT;
        }
    }
    return SF_OK;
}

static void fetch_respond(fetch_ctx_t *fc);

static void fetch_run(void *arg, sf_group_t *g, int16_t err) {
    fetch_one_t *one = arg;
    fetch_ctx_t *fc = one->fc;
    fetch_group_t *fg = &fc->groups[one->index];
    int rc = SF_OK;
    fg->ErrorCode = err;
    if (one->topics)
        rc = fill_listed(fc->kr, fg, one, g);
    else if (g)
        rc = fill_all(fc->kr, fg, g);
    if (rc != SF_OK)
        fg->ErrorCode = SF_KERR_UNKNOWN_SERVER_ERROR;
    if (--fc->pending == 0)
        fetch_respond(fc);
}

/* v0-7: one group, its error at the top (v2+) or in every partition (v0-1). */
static void fetch_respond(fetch_ctx_t *fc) {
    sf_kreq_t *kr = fc->kr;
    sf_proto_OffsetFetchResponse_t resp;
    int t, p;
    sf_proto_OffsetFetchResponse_init(&resp);
    if (kr->version >= 8) {
        resp.Groups = fc->groups;
        resp.GroupsCount = fc->ngroups;
        sf_kreq_respond(kr, &resp);
        return;
    }
    /* The v0-7 structs have the same members as the v8 ones, in the same order. */
    resp.ErrorCode = kr->version >= 2 ? fc->groups[0].ErrorCode : SF_KERR_NONE;
    resp.TopicsCount = fc->groups[0].TopicsCount;
    resp.Topics = (sf_proto_OffsetFetchResponse_OffsetFetchResponseTopic_t *)fc->groups[0].Topics;
    for (t = 0; kr->version < 2 && t < resp.TopicsCount; t++)
        for (p = 0; p < resp.Topics[t].PartitionsCount; p++)
            resp.Topics[t].Partitions[p].ErrorCode = fc->groups[0].ErrorCode;
    sf_kreq_respond(kr, &resp);
}

void sf_kapi_OffsetFetch(sf_kreq_t *kr, void *msg) {
    const sf_proto_OffsetFetchRequest_t *req = msg;
    sf_coord_t *c = sf_broker_coordinator(kr->b);
    fetch_ctx_t *fc = sf_kreq_alloc(kr, 1, sizeof(*fc));
    fetch_one_t *ones;
    int i, n = kr->version >= 8 ? (req->GroupsCount > 0 ? req->GroupsCount : 0) : 1;
    ones = sf_kreq_alloc(kr, (size_t)n, sizeof(*ones));
    if (!fc || !ones || !(fc->groups = sf_kreq_alloc(kr, (size_t)n, sizeof(*fc->groups)))) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    fc->kr = kr;
    fc->ngroups = fc->pending = n;
    if (n == 0) {
        fetch_respond(fc);
        return;
    }
    for (i = 0; i < n; i++) {
        sf_slice_t gid = kr->version >= 8 ? req->Groups[i].GroupId : req->GroupId;
        int32_t nt = kr->version >= 8 ? req->Groups[i].TopicsCount : req->TopicsCount;
        const char *group = group_name(kr, gid);
        sf_proto_OffsetFetchResponse_OffsetFetchResponseGroup_init(&fc->groups[i]);
        fc->groups[i].GroupId = gid;
        ones[i].fc = fc;
        ones[i].index = i;
        /* v0-1 have no null array: every listed partition is asked for */
        if (nt >= 0 || kr->version < 2) {
            ones[i].topics = kr->version >= 8
                                 ? req->Groups[i].Topics
                                 : (const sf_proto_OffsetFetchRequest_OffsetFetchRequestTopics_t *)
                                       req->Topics;
            ones[i].ntopics = nt > 0 ? nt : 0;
            if (!ones[i].topics)
                ones[i].topics = (const void *)&ones[i]; /* an empty list, not "all" */
        }
        if (!group || !c)
            fetch_run(&ones[i], NULL, group ? SF_KERR_COORDINATOR_NOT_AVAILABLE
                                            : SF_KERR_UNKNOWN_SERVER_ERROR);
        else
            sf_coord_with_group(c, group, fetch_run, &ones[i]);
    }
}

/* ---- OffsetDelete ---- */

typedef struct odel_ctx {
    sf_kreq_t *kr;
    sf_proto_OffsetDeleteResponse_t resp;
    sf_proto_OffsetDeleteResponse_OffsetDeleteResponsePartition_t **slot;
    sf_goffset_t *items;
    int16_t *errs;
    int n;
} odel_ctx_t;

static void odel_answer(void *arg, int16_t error) {
    odel_ctx_t *dc = arg;
    int i;
    dc->resp.ErrorCode = error;
    for (i = 0; !error && i < dc->n; i++)
        dc->slot[i]->ErrorCode = dc->errs[i];
    if (error) /* Kafka answers a group error with no partitions */
        dc->resp.TopicsCount = 0;
    sf_kreq_respond(dc->kr, &dc->resp);
}

static int odel_build(sf_kreq_t *kr, odel_ctx_t *dc, const sf_proto_OffsetDeleteRequest_t *req) {
    int t, p, total = 0;
    for (t = 0; t < req->TopicsCount; t++)
        total += req->Topics[t].PartitionsCount > 0 ? req->Topics[t].PartitionsCount : 0;
    dc->resp.TopicsCount = req->TopicsCount > 0 ? req->TopicsCount : 0;
    dc->resp.Topics = sf_kreq_alloc(kr, (size_t)dc->resp.TopicsCount, sizeof(*dc->resp.Topics));
    if (!dc->resp.Topics ||
        !(dc->slot = sf_kreq_alloc(kr, (size_t)total, sizeof(*dc->slot))) ||
        !(dc->items = sf_kreq_alloc(kr, (size_t)total, sizeof(*dc->items))) ||
        !(dc->errs = sf_kreq_alloc(kr, (size_t)total, sizeof(*dc->errs))))
        return SF_ERR_NOMEM;
    for (t = 0; t < dc->resp.TopicsCount; t++) {
        const sf_proto_OffsetDeleteRequest_OffsetDeleteRequestTopic_t *rt = &req->Topics[t];
        sf_proto_OffsetDeleteResponse_OffsetDeleteResponseTopic_t *st = &dc->resp.Topics[t];
        const char *topic = sf_kreq_str(kr, rt->Name);
        const sf_cluster_topic_t *ct = topic ? sf_cluster_snapshot_topic(kr->snap, topic) : NULL;
        sf_proto_OffsetDeleteResponse_OffsetDeleteResponseTopic_init(st);
        st->Name = rt->Name;
        st->PartitionsCount = rt->PartitionsCount > 0 ? rt->PartitionsCount : 0;
        if (!topic || !(st->Partitions = sf_kreq_alloc(kr, (size_t)st->PartitionsCount,
                                                       sizeof(*st->Partitions))))
            return SF_ERR_NOMEM;
        for (p = 0; p < st->PartitionsCount; p++) {
            sf_proto_OffsetDeleteResponse_OffsetDeleteResponsePartition_t *sp = &st->Partitions[p];
            int32_t idx = rt->Partitions[p].PartitionIndex;
            sf_proto_OffsetDeleteResponse_OffsetDeleteResponsePartition_init(sp);
            sp->PartitionIndex = idx;
            if (!ct || idx < 0 || idx >= ct->npartitions) {
                sp->ErrorCode = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
                continue;
            }
            dc->items[dc->n].topic = topic;
            dc->items[dc->n].partition = idx;
            dc->slot[dc->n++] = sp;
        }
    }
    return SF_OK;
}

static void odel_run(void *arg, sf_group_t *g, int16_t err) {
    odel_ctx_t *dc = arg;
    if (!g)
        odel_answer(dc, err);
    else
        sf_group_delete_offsets(g, dc->items, dc->n, dc->errs, odel_answer, dc);
}

void sf_kapi_OffsetDelete(sf_kreq_t *kr, void *msg) {
    const sf_proto_OffsetDeleteRequest_t *req = msg;
    sf_coord_t *c = sf_broker_coordinator(kr->b);
    odel_ctx_t *dc = sf_kreq_alloc(kr, 1, sizeof(*dc));
    const char *group = group_name(kr, req->GroupId);
    if (!dc || !group) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    dc->kr = kr;
    sf_proto_OffsetDeleteResponse_init(&dc->resp);
    if (odel_build(kr, dc, req) != SF_OK) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    if (!c)
        odel_answer(dc, SF_KERR_COORDINATOR_NOT_AVAILABLE);
    else
        sf_coord_with_group(c, group, odel_run, dc);
}
