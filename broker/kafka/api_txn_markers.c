/* WriteTxnMarkers, every version, from a transaction coordinator: each marker is appended as
 * a control batch to the partitions this broker leads (sf_log_append_marker, on the
 * partition's I/O thread), and a partition is done once its ISR has the marker (the high
 * watermark passed it, as an acks=all produce), which is when its last stable offset moves.
 * "__consumer_offsets" partitions stand for the groups of a coordinator bucket: once the
 * partitions' markers are in, the request moves to the metadata thread, where the group
 * coordinator commits or drops the producer's pending offsets for those groups
 * (sf_coord_txn_complete), then back home to wait for the ISRs or answer. */
#include "dispatch.h"

#include <string.h>

#include "brokercfg.h"
#include "clock.h"
#include "group.h"
#include "leader.h"
#include "log.h"
#include "logging.h"

/* How long a marker waits for the ISR here: less than the coordinator's request timeout
 * (markers.c), so it hears the outcome instead of timing out itself. */
#define MARKERS_TIMEOUT_MS 20000
#define OFFSETS_TOPIC "__consumer_offsets"

typedef struct marker_op marker_op_t;

typedef struct marker_job {
    sf_kjob_t job;
    marker_op_t *op;
    const sf_proto_WriteTxnMarkersRequest_WritableTxnMarker_t *mk;
    const char *topic;
    int64_t wait_offset; /* answered once the high watermark reaches it (0: not waiting) */
    const sf_log_t *log;
    int offsets; /* a group coordinator bucket: settled on the metadata thread */
    sf_proto_WriteTxnMarkersResponse_WritableTxnMarkerPartitionResult_t *rp;
} marker_job_t;

struct marker_op {
    sf_kreq_t *kr;
    sf_proto_WriteTxnMarkersResponse_t resp;
    marker_job_t *jobs;
    int njobs;
    atomic_int waiting;
    int noffsets; /* jobs of __consumer_offsets partitions */
    int settling; /* of those, not settled yet */
    sf_mail_t meta, home;
};

static void marker_append(sf_kjob_t *job) {
    marker_job_t *mj = job->arg;
    sf_kreq_t *kr = job->kr;
    sf_log_t *log = job->part->log;
    const sf_cluster_partition_t *cp = sf_kreq_partition(kr, mj->topic, mj->rp->PartitionIndex);
    sf_log_config_t lc;
    int64_t offset;
    int rc;
    sf_log_get_config(log, &lc);
    if (cp && cp->nisr < lc.min_insync_replicas) {
        mj->rp->ErrorCode = SF_KERR_NOT_ENOUGH_REPLICAS;
        return;
    }
    rc = sf_log_append_marker(log, mj->mk->ProducerId, mj->mk->ProducerEpoch,
                              mj->mk->TransactionResult, mj->mk->CoordinatorEpoch,
                              sf_clock_wall_ms(), &offset);
    if (rc != SF_OK) {
        mj->rp->ErrorCode = sf_err_to_kerr(rc, SF_ERR_OP_APPEND);
        sf_log(SF_LOG_INFO, "TXN", "%s-%d: marker of producer %lld refused: %s", mj->topic,
               mj->rp->PartitionIndex, (long long)mj->mk->ProducerId, sf_err_str(rc));
        return;
    }
    if (sf_leader_replicated(cp)) {
        sf_leader_update_hw(job->part, cp, sf_broker_cfg(kr->b)->broker_id);
        if (sf_log_high_watermark(log) <= offset) {
            mj->wait_offset = offset + 1;
            mj->log = log;
            atomic_fetch_add(&mj->op->waiting, 1);
        }
    }
    sf_broker_notify_partition(kr->b, log);
}

/* Settle the partitions whose ISR has their marker, that lost their leadership here, or
 * (@final) that waited too long. 1 when the request was answered. */
static int markers_attempt(void *arg, int final) {
    marker_op_t *op = arg;
    sf_kreq_t *kr = op->kr;
    int32_t self = sf_broker_cfg(kr->b)->broker_id;
    int i, pending = 0;
    sf_kreq_refresh(kr);
    for (i = 0; i < op->njobs; i++) {
        marker_job_t *mj = &op->jobs[i];
        const sf_cluster_partition_t *cp;
        sf_partition_t *part;
        if (!mj->wait_offset)
            continue;
        cp = sf_kreq_partition(kr, mj->topic, mj->rp->PartitionIndex);
        part = sf_view_partition(kr->view, mj->topic, mj->rp->PartitionIndex);
        if (!cp || cp->leader != self || !part || part->log != mj->log) {
            mj->rp->ErrorCode = SF_KERR_NOT_LEADER_OR_FOLLOWER;
        } else {
            sf_leader_update_hw(part, cp, self);
            if (sf_log_high_watermark(part->log) < mj->wait_offset && !final) {
                pending++;
                continue;
            }
            if (sf_log_high_watermark(part->log) < mj->wait_offset)
                mj->rp->ErrorCode = SF_KERR_REQUEST_TIMED_OUT;
        }
        mj->wait_offset = 0;
    }
    if (pending)
        return 0;
    sf_kreq_respond(kr, &op->resp);
    return 1;
}

static void markers_park(void *arg) {
    marker_op_t *op = arg;
    sf_kreq_t *kr = op->kr;
    sf_pkey_t *keys = sf_kreq_alloc(kr, (size_t)op->njobs + 1, sizeof(*keys));
    int i, n = 0;
    if (markers_attempt(op, !keys))
        return;
    keys[n++] = sf_pkey_metadata();
    for (i = 0; i < op->njobs; i++)
        if (op->jobs[i].wait_offset)
            keys[n++] = sf_pkey_partition(op->jobs[i].log);
    if (!sf_kreq_park(kr, keys, n, MARKERS_TIMEOUT_MS, markers_attempt, op))
        markers_attempt(op, 1);
}

static void markers_finish(void *arg) {
    marker_op_t *op = arg;
    if (atomic_load(&op->waiting) > 0)
        markers_park(op);
    else
        sf_kreq_respond(op->kr, &op->resp);
}

static void settle_step(marker_op_t *op) {
    if (--op->settling == 0)
        sf_kreq_home(op->kr, &op->home, markers_finish, op);
}

/* On the metadata thread: one bucket's pending offsets settled. */
static void offsets_settled(void *arg, int16_t error) {
    marker_job_t *mj = arg;
    mj->rp->ErrorCode = error == SF_KERR_NOT_COORDINATOR ? SF_KERR_NOT_LEADER_OR_FOLLOWER : error;
    settle_step(mj->op);
}

static void offsets_settle(void *arg) {
    marker_op_t *op = arg;
    sf_coord_t *c = sf_broker_coordinator(op->kr->b);
    int i;
    op->settling = op->noffsets + 1;
    for (i = 0; i < op->njobs; i++) {
        marker_job_t *mj = &op->jobs[i];
        if (!mj->offsets)
            continue;
        if (c)
            sf_coord_txn_complete(c, mj->rp->PartitionIndex, mj->mk->ProducerId,
                                  mj->mk->TransactionResult, offsets_settled, mj);
        else
            offsets_settled(mj, SF_KERR_COORDINATOR_NOT_AVAILABLE);
    }
    settle_step(op); /* the count held while starting */
}

static void markers_done(sf_kreq_t *kr, void *arg) {
    marker_op_t *op = arg;
    if (op->noffsets) {
        op->meta.fn = offsets_settle;
        op->meta.arg = op;
        op->meta.heap = 0;
        sf_broker_to_metadata(kr->b, &op->meta);
    } else if (atomic_load(&op->waiting) > 0) {
        sf_kreq_home(kr, &op->home, markers_park, op);
    } else {
        sf_kreq_respond(kr, &op->resp);
    }
}

static void marker_partition(sf_kreq_t *kr, marker_job_t *mj) {
    sf_partition_t *part;
    sf_kerr_t kerr;
    if (!strcmp(mj->topic, OFFSETS_TOPIC)) {
        mj->offsets = 1;
        mj->op->noffsets++;
        return;
    }
    if (!(part = sf_kreq_leader(kr, mj->topic, mj->rp->PartitionIndex, &kerr))) {
        mj->rp->ErrorCode = kerr;
        return;
    }
    sf_kreq_append_submit(kr, &mj->job, part, marker_append, mj);
}

/* The answer's slots, one job per partition (allocated before any job runs). */
static int markers_prepare(sf_kreq_t *kr, marker_op_t *op,
                           const sf_proto_WriteTxnMarkersRequest_t *req) {
    int m, t, n = 0;
    for (m = 0; m < req->MarkersCount; m++)
        for (t = 0; t < req->Markers[m].TopicsCount; t++)
            n += req->Markers[m].Topics[t].PartitionIndexesCount;
    if (!(op->jobs = sf_kreq_alloc(kr, (size_t)n + 1, sizeof(*op->jobs))) ||
        !(op->resp.Markers = sf_kreq_alloc(kr, (size_t)req->MarkersCount + 1,
                                           sizeof(*op->resp.Markers))))
        return -1;
    op->resp.MarkersCount = req->MarkersCount;
    for (m = 0; m < req->MarkersCount; m++) {
        const sf_proto_WriteTxnMarkersRequest_WritableTxnMarker_t *mk = &req->Markers[m];
        sf_proto_WriteTxnMarkersResponse_WritableTxnMarkerResult_t *rm = &op->resp.Markers[m];
        sf_proto_WriteTxnMarkersResponse_WritableTxnMarkerResult_init(rm);
        rm->ProducerId = mk->ProducerId;
        if (!(rm->Topics = sf_kreq_alloc(kr, (size_t)mk->TopicsCount + 1, sizeof(*rm->Topics))))
            return -1;
        rm->TopicsCount = mk->TopicsCount;
        for (t = 0; t < mk->TopicsCount; t++) {
            const sf_proto_WriteTxnMarkersRequest_WritableTxnMarkerTopic_t *qt = &mk->Topics[t];
            sf_proto_WriteTxnMarkersResponse_WritableTxnMarkerTopicResult_t *rt = &rm->Topics[t];
            const char *topic = sf_kreq_str(kr, qt->Name);
            int p;
            sf_proto_WriteTxnMarkersResponse_WritableTxnMarkerTopicResult_init(rt);
            rt->Name = qt->Name;
            if (!topic || !(rt->Partitions = sf_kreq_alloc(kr, (size_t)qt->PartitionIndexesCount + 1,
                                                           sizeof(*rt->Partitions))))
                return -1;
            rt->PartitionsCount = qt->PartitionIndexesCount;
            for (p = 0; p < qt->PartitionIndexesCount; p++) {
                marker_job_t *mj = &op->jobs[op->njobs++];
                mj->op = op;
                mj->mk = mk;
                mj->topic = topic;
                mj->rp = &rt->Partitions[p];
                sf_proto_WriteTxnMarkersResponse_WritableTxnMarkerPartitionResult_init(mj->rp);
                mj->rp->PartitionIndex = qt->PartitionIndexes[p];
            }
        }
    }
    return 0;
}

void sf_kapi_WriteTxnMarkers(sf_kreq_t *kr, void *msg) {
    const sf_proto_WriteTxnMarkersRequest_t *req = msg;
    marker_op_t *op = sf_kreq_alloc(kr, 1, sizeof(*op));
    int i;
    if (!op) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    op->kr = kr;
    atomic_init(&op->waiting, 0);
    sf_proto_WriteTxnMarkersResponse_init(&op->resp);
    if (markers_prepare(kr, op, req) < 0) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    sf_kreq_jobs_begin(kr, markers_done, op);
    for (i = 0; i < op->njobs; i++)
        marker_partition(kr, &op->jobs[i]);
    sf_kreq_jobs_end(kr);
}
