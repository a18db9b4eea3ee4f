/* DescribeConfigs, AlterConfigs and IncrementalAlterConfigs: topic configs (topiccfg.c) in
 * ZooKeeper, and the broker's own settings: static (the configuration file) or, for the
 * broker settings behind topic configs, dynamic (Kafka's /config/brokers/<id> and
 * /config/brokers/<default>, changed without a restart). */
#include "dispatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_op.h"
#include "brokercfg.h"
#include "logging.h"
#include "topiccfg.h"

#define RESOURCE_TOPIC 2
#define RESOURCE_BROKER 4
#define MAX_SYNONYMS 6

/* The topic config context of a request: the broker's static configuration with the dynamic
 * broker configs of the request's own snapshot (referenced until it is answered). */
static void request_ctx(const sf_kreq_t *kr, sf_topiccfg_ctx_t *ctx) {
    *ctx = *sf_kreq_topiccfg(kr);
}

/* The topic config behind a broker setting that may change at run time (a dynamic broker
 * config), with the index of that setting among its synonyms; NULL for the settings that only
 * the configuration file sets. Every broker setting behind a topic config is dynamic. */
static const sf_topiccfg_def_t *dynamic_def(const char *broker_key, int *idx) {
    return sf_topiccfg_find_synonym(broker_key, idx);
}

/* The dynamic config a BROKER resource names: "" the cluster-wide default, this broker's id
 * its own. Another broker's id (Kafka in ZooKeeper mode: each broker changes its own) or a
 * name that is not an id: 0, with the reason in *@why (when @why is not NULL). */
static int broker_target(sf_kreq_t *kr, sf_slice_t name, sf_admin_target_t *target,
                         const char **why) {
    int32_t me = sf_broker_cfg(kr->b)->broker_id, i;
    int64_t id = 0;
    const char *msg = NULL;
    if (name.len < 0) {
        msg = "the broker id is null; give this broker's id, or \"\" for the cluster-wide default";
    } else if (name.len == 0) {
        *target = SF_ADMIN_TARGET_DEFAULT;
        return 1;
    }
    for (i = 0; !msg && i < name.len; i++) {
        if (name.p[i] < '0' || name.p[i] > '9' || i >= 10) {
            msg = why ? sf_kreq_printf(kr, "the broker id must be an integer, but it is: %.*s",
                                       name.len > 40 ? 40 : (int)name.len, (const char *)name.p)
                      : "";
            break;
        }
        id = id * 10 + (name.p[i] - '0');
    }
    if (!msg && id != me)
        msg = why ? sf_kreq_printf(kr, "unexpected broker id %lld: this is broker %d (each broker "
                                       "changes its own dynamic configs; \"\" names the "
                                       "cluster-wide default)", (long long)id, (int)me)
                  : "";
    if (msg) {
        if (why)
            *why = msg;
        return 0;
    }
    *target = SF_ADMIN_TARGET_BROKER;
    return 1;
}

/* ---- DescribeConfigs ---- */

static int key_wanted(const sf_proto_DescribeConfigsRequest_DescribeConfigsResource_t *res,
                      const char *name) {
    int i;
    if (res->ConfigurationKeysCount < 0)
        return 1;
    for (i = 0; i < res->ConfigurationKeysCount; i++)
        if (sf_slice_eq(res->ConfigurationKeys[i], name))
            return 1;
    return 0;
}

/* One config entry from its candidate values (the first is the effective one). */
static int describe_entry(sf_kreq_t *kr, const sf_proto_DescribeConfigsRequest_t *dreq,
                          const sf_topiccfg_def_t *def, const char *name, int read_only,
                          const sf_topiccfg_value_t *vals, int nvals,
                          sf_proto_DescribeConfigsResponse_DescribeConfigsResourceResult_t *c) {
    int i;
    sf_proto_DescribeConfigsResponse_DescribeConfigsResourceResult_init(c);
    c->Name = sf_slice_cstr(name);
    c->Value = sf_kreq_slice(kr, vals[0].value);
    c->ReadOnly = read_only;
    c->IsDefault = vals[0].source == SF_CFGSRC_DEFAULT;
    c->ConfigSource = (int8_t)vals[0].source;
    c->ConfigType = (int8_t)def->type;
    c->Documentation = sf_slice_cstr(kr->version >= 3 && dreq->IncludeDocumentation ? def->doc
                                                                                     : NULL);
    if (kr->version < 1 || !dreq->IncludeSynonyms)
        return SF_OK;
    if (!(c->Synonyms = sf_kreq_alloc(kr, (size_t)nvals, sizeof(*c->Synonyms))))
        return SF_ERR_NOMEM;
    for (i = 0; i < nvals; i++) {
        c->Synonyms[i].Name = sf_slice_cstr(vals[i].name);
        c->Synonyms[i].Value = sf_kreq_slice(kr, vals[i].value);
        c->Synonyms[i].Source = (int8_t)vals[i].source;
    }
    c->SynonymsCount = nvals;
    return SF_OK;
}

/* The configs of a topic (@t) or of this broker (@t NULL: each topic config's broker
 * setting, read-only unless it is dynamic, and the replication quotas). */
static int describe_resource(sf_kreq_t *kr, const sf_proto_DescribeConfigsRequest_t *dreq,
                             const sf_proto_DescribeConfigsRequest_DescribeConfigsResource_t *res,
                             const sf_cluster_topic_t *t,
                             sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *rr) {
    sf_topiccfg_ctx_t ctx;
    size_t n, nb, i;
    const sf_topiccfg_def_t *defs = sf_topiccfg_all(&n), *bdefs = sf_topiccfg_broker_only(&nb);
    request_ctx(kr, &ctx);
    rr->Configs = sf_kreq_alloc(kr, n + nb, sizeof(*rr->Configs));
    if (!rr->Configs)
        return SF_ERR_NOMEM;
    for (i = 0; i < (t ? n : n + nb); i++) {
        const sf_topiccfg_def_t *def = i < n ? &defs[i] : &bdefs[i - n];
        sf_topiccfg_value_t vals[MAX_SYNONYMS];
        const char *name = t ? def->name : def->synonyms[0].name;
        int nv;
        if (!name || !key_wanted(res, name))
            continue;
        nv = sf_topiccfg_resolve(&ctx, t, def, vals, MAX_SYNONYMS);
        if (describe_entry(kr, dreq, def, name, !t && !dynamic_def(name, NULL), vals, nv,
                           &rr->Configs[rr->ConfigsCount++]) != SF_OK)
            return SF_ERR_NOMEM;
    }
    return SF_OK;
}

/* The cluster-wide default (the resource ""): as Kafka, only the dynamic defaults that are
 * set, each as it is stored (settings StreamFlow does not know are left out). */
static int describe_default(sf_kreq_t *kr, const sf_proto_DescribeConfigsRequest_t *dreq,
                            const sf_proto_DescribeConfigsRequest_DescribeConfigsResource_t *res,
                            sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *rr) {
    const sf_cluster_snapshot_t *snap = kr->snap;
    int n = snap ? snap->ndefault_configs : 0, i;
    rr->Configs = sf_kreq_alloc(kr, (size_t)n, sizeof(*rr->Configs));
    if (!rr->Configs)
        return SF_ERR_NOMEM;
    for (i = 0; i < n; i++) {
        const sf_cluster_config_entry_t *e = &snap->default_configs[i];
        const sf_topiccfg_def_t *def = dynamic_def(e->name, NULL);
        sf_topiccfg_value_t v;
        if (!def || !key_wanted(res, e->name))
            continue;
        memset(&v, 0, sizeof(v));
        v.name = e->name;
        v.value = e->value;
        v.source = SF_CFGSRC_DYNAMIC_DEFAULT_BROKER;
        if (describe_entry(kr, dreq, def, e->name, 0, &v, 1,
                           &rr->Configs[rr->ConfigsCount++]) != SF_OK)
            return SF_ERR_NOMEM;
    }
    return SF_OK;
}

void sf_kapi_DescribeConfigs(sf_kreq_t *kr, void *msg) {
    const sf_proto_DescribeConfigsRequest_t *dreq = msg;
    sf_proto_DescribeConfigsResponse_t resp;
    int i;

    sf_proto_DescribeConfigsResponse_init(&resp);
    resp.Results = sf_kreq_alloc(kr, (size_t)dreq->ResourcesCount, sizeof(*resp.Results));
    if (!resp.Results)
        goto nomem;
    resp.ResultsCount = dreq->ResourcesCount;
    for (i = 0; i < dreq->ResourcesCount; i++) {
        const sf_proto_DescribeConfigsRequest_DescribeConfigsResource_t *res = &dreq->Resources[i];
        sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *rr = &resp.Results[i];
        const sf_cluster_topic_t *t = NULL;
        sf_admin_target_t target = SF_ADMIN_TARGET_TOPIC;
        const char *why = NULL;
        int rc = SF_OK;
        sf_proto_DescribeConfigsResponse_DescribeConfigsResult_init(rr);
        rr->ResourceType = res->ResourceType;
        rr->ResourceName = res->ResourceName;
        if (res->ResourceType == RESOURCE_TOPIC) {
            if (!(t = sf_kreq_topic(kr, sf_kreq_str(kr, res->ResourceName)))) {
                rr->ErrorCode = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
                rr->ErrorMessage = sf_slice_cstr("the topic does not exist");
            } else {
                rc = describe_resource(kr, dreq, res, t, rr);
            }
        } else if (res->ResourceType == RESOURCE_BROKER) {
            if (!broker_target(kr, res->ResourceName, &target, &why)) {
                rr->ErrorCode = SF_KERR_INVALID_REQUEST;
                rr->ErrorMessage = sf_slice_cstr(why);
            } else if (target == SF_ADMIN_TARGET_DEFAULT) {
                rc = describe_default(kr, dreq, res, rr);
            } else {
                rc = describe_resource(kr, dreq, res, NULL, rr);
            }
        } else {
            rr->ErrorCode = SF_KERR_INVALID_REQUEST;
            rr->ErrorMessage = sf_slice_cstr("only topic and broker resources are described");
        }
        if (rc != SF_OK)
            goto nomem;
    }
    sf_kreq_respond(kr, &resp);
    return;
nomem:
    sf_kreq_close(kr, "no memory for the response");
}

/* ---- AlterConfigs and IncrementalAlterConfigs ---- */

/* A change to apply, from either request: AlterConfigs' entries are SET operations (a null
 * value unsets). */
typedef sf_proto_IncrementalAlterConfigsRequest_AlterConfigsResource_t config_resource_t;
typedef sf_proto_IncrementalAlterConfigsRequest_AlterableConfig_t config_change_t;

/* The config set a resource's changes apply to. */
typedef struct config_target {
    sf_admin_target_t target;
    const sf_cluster_topic_t *t;          /* SF_ADMIN_TARGET_TOPIC: the topic */
    const sf_cluster_config_entry_t *cur; /* the set as it is now (sorted) */
    int ncur;
    sf_topiccfg_ctx_t inherited; /* where a key not in the set takes its value from */
} config_target_t;

static int config_find(const sf_cluster_config_entry_t *cfgs, int n, const char *name) {
    int i;
    for (i = 0; i < n; i++)
        if (!strcmp(cfgs[i].name, name))
            return i;
    return -1;
}

/* The new value of one change to @name, which is @def's name (a topic) or its broker synonym
 * @syn (a broker), or NULL to unset; sets it->error when the change is bad. Returns a
 * malloc'd value in *@out (NULL: unset). */
static int change_value(sf_kreq_t *kr, sf_admin_item_t *it, const config_change_t *ch,
                        const char *name, const sf_topiccfg_def_t *def, int syn,
                        const char *value, const char *current, const config_target_t *tg,
                        int incremental, char **out) {
    char why[160], buf[256];
    int ok;
    *out = NULL;
    switch (ch->ConfigOperation) {
    case SF_PROTO_CONFIG_OP_SET:
        if (!value && incremental)
            return sf_admin_fail(it, SF_KERR_INVALID_REQUEST,
                                 sf_kreq_printf(kr, "null value for %s (use DELETE)", name));
        if (value && !(*out = strdup(value)))
            return sf_admin_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
        break;
    case SF_PROTO_CONFIG_OP_DELETE:
        return 1;
    case SF_PROTO_CONFIG_OP_APPEND:
    case SF_PROTO_CONFIG_OP_SUBTRACT:
        if (def->type != SF_TOPICCFG_LIST)
            return sf_admin_fail(it, SF_KERR_INVALID_REQUEST,
                                 sf_kreq_printf(kr, "%s is not a list config: APPEND and SUBTRACT "
                                                    "apply to list configs only", name));
        if (!value)
            return sf_admin_fail(it, SF_KERR_INVALID_REQUEST,
                                 sf_kreq_printf(kr, "null value for %s", name));
        /* Items to add must be valid ones (which also keeps the list short). */
        if (ch->ConfigOperation == SF_PROTO_CONFIG_OP_APPEND &&
            !sf_topiccfg_validate(def, value, why, sizeof(why)))
            return sf_admin_fail(it, SF_KERR_INVALID_CONFIG,
                                 sf_kreq_printf(kr, "invalid value \"%.100s\" for %s: %s", value,
                                                name, why));
        /* The list to edit: the set's value, else the one it inherits (as Kafka for topics). */
        if (!current)
            current = sf_topiccfg_get(&tg->inherited, tg->t, def->name, buf, sizeof(buf));
        if (!(*out = sf_topiccfg_list_edit(current, value,
                                           ch->ConfigOperation == SF_PROTO_CONFIG_OP_SUBTRACT)))
            return sf_admin_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
        break;
    default:
        return sf_admin_fail(it, SF_KERR_INVALID_REQUEST,
                             sf_kreq_printf(kr, "unknown config operation %d for %s",
                                            ch->ConfigOperation, name));
    }
    if (*out) {
        ok = syn >= 0 ? sf_topiccfg_validate_synonym(def, syn, *out, why, sizeof(why))
                      : sf_topiccfg_validate(def, *out, why, sizeof(why));
        if (!ok) {
            sf_admin_fail(it, SF_KERR_INVALID_CONFIG,
                          sf_kreq_printf(kr, "invalid value \"%.100s\" for %s: %s", *out, name,
                                         why));
            free(*out);
            *out = NULL;
            return 0;
        }
    }
    if (*out) {
        const char *norm = sf_topiccfg_normalize(def, *out, buf, sizeof(buf));
        if (norm != *out) {
            free(*out);
            if (!(*out = strdup(norm)))
                return sf_admin_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
        }
    }
    return 1;
}

/* Broker resources: the keys that are not dynamic, refused together (a DELETE of one that is
 * stored, written by another tool, is let through: it only removes it). Returns 1 if none. */
static int broker_keys_dynamic(sf_kreq_t *kr, sf_admin_item_t *it, const config_resource_t *res,
                               const config_target_t *tg) {
    char list[256];
    size_t len = 0;
    int j, bad = 0;
    list[0] = '\0';
    for (j = 0; j < res->ConfigsCount; j++) {
        const config_change_t *ch = &res->Configs[j];
        char *name = sf_kreq_str(kr, ch->Name);
        if (!name || dynamic_def(name, NULL) ||
            (ch->ConfigOperation == SF_PROTO_CONFIG_OP_DELETE &&
             sf_cluster_configs_find(tg->cur, tg->ncur, name)))
            continue;
        if (bad++ < 5 && len < sizeof(list))
            len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%.80s", len ? ", " : "",
                                    name);
    }
    if (!bad)
        return 1;
    return sf_admin_fail(it, SF_KERR_INVALID_REQUEST,
                         sf_kreq_printf(kr, "%s%s cannot be updated dynamically (the broker "
                                            "settings behind topic configs can; change the "
                                            "others in the configuration file)",
                                        list, bad > 5 ? ", ..." : ""));
}

/* Apply @res's changes to a copy of the target's current set (incremental) or to an empty set
 * (AlterConfigs replaces the whole set) into it->configs. Returns 1 when the set is ready. */
static int prepare_configs(sf_kreq_t *kr, sf_admin_item_t *it, const config_resource_t *res,
                           const config_target_t *tg, int incremental) {
    sf_cluster_config_entry_t *cfgs;
    sf_admin_key_t *keys;
    int n = 0, j, ok = 1;

    if (!(keys = calloc((size_t)res->ConfigsCount + 1, sizeof(*keys))))
        return sf_admin_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
    for (j = 0; j < res->ConfigsCount; j++) {
        keys[j].name = res->Configs[j].Name;
        keys[j].idx = j;
    }
    j = sf_admin_find_dups(keys, res->ConfigsCount, NULL);
    free(keys);
    if (j >= 0)
        return sf_admin_fail(it, SF_KERR_INVALID_REQUEST,
                             sf_kreq_printf(kr, "config %.*s is named more than once",
                                            res->Configs[j].Name.len > 200 ? 200
                                                                           : res->Configs[j].Name.len,
                                            (const char *)res->Configs[j].Name.p));
    if (tg->target != SF_ADMIN_TARGET_TOPIC && !broker_keys_dynamic(kr, it, res, tg))
        return 0;
    cfgs = calloc((size_t)(incremental ? tg->ncur : 0) + (size_t)res->ConfigsCount + 1,
                  sizeof(*cfgs));
    if (!cfgs)
        return sf_admin_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
    /* Entries StreamFlow does not know (written by other tools) are kept as they are. */
    for (j = 0; incremental && j < tg->ncur && ok; j++) {
        if (!tg->cur[j].name || !tg->cur[j].value)
            continue;
        cfgs[n].name = strdup(tg->cur[j].name);
        cfgs[n].value = strdup(tg->cur[j].value);
        ok = cfgs[n].name && cfgs[n].value;
        n++;
    }
    if (!ok)
        sf_admin_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
    for (j = 0; ok && j < res->ConfigsCount; j++) {
        const config_change_t *ch = &res->Configs[j];
        char *name = sf_kreq_str(kr, ch->Name), *value = sf_kreq_str(kr, ch->Value), *nv = NULL;
        const sf_topiccfg_def_t *def;
        int at, syn = -1;
        if (!name || strlen(name) != (size_t)ch->Name.len) {
            ok = sf_admin_fail(it, SF_KERR_INVALID_CONFIG, "bad config name");
            break;
        }
        at = config_find(cfgs, n, name);
        if (tg->target != SF_ADMIN_TARGET_TOPIC)
            def = dynamic_def(name, &syn);
        else if (!(def = sf_topiccfg_find(name))) {
            ok = sf_admin_fail(it, SF_KERR_INVALID_CONFIG,
                               sf_kreq_printf(kr, "unknown topic config %.200s", name));
            break;
        }
        /* (a broker key without a definition is the DELETE of a stored one: see above) */
        if (def && !(ok = change_value(kr, it, ch, name, def, syn, value,
                                       at >= 0 ? cfgs[at].value : NULL, tg, incremental, &nv)))
            break;
        if (!nv) {
            if (at >= 0) {
                free(cfgs[at].name);
                free(cfgs[at].value);
                cfgs[at] = cfgs[--n];
            }
            continue;
        }
        if (at < 0) {
            at = n++;
            ok = (cfgs[at].name = strdup(name)) != NULL;
        } else {
            free(cfgs[at].value);
        }
        cfgs[at].value = nv;
        if (!ok)
            sf_admin_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
    }
    if (!ok) {
        sf_cluster_configs_free(cfgs, n);
        return 0;
    }
    it->configs = cfgs;
    it->nconfigs = n;
    return 1;
}

/* A topic resource: its overrides, inheriting from the broker. */
static int prepare_topic(sf_kreq_t *kr, sf_admin_item_t *it, const config_resource_t *res,
                         int incremental) {
    config_target_t tg;
    if (!(it->topic = sf_admin_name_dup(res->ResourceName)))
        return sf_admin_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
    memset(&tg, 0, sizeof(tg));
    tg.target = it->target = SF_ADMIN_TARGET_TOPIC;
    if (!(tg.t = sf_kreq_topic(kr, it->topic)))
        return sf_admin_fail(it, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION, "the topic does not exist");
    tg.cur = tg.t->configs;
    tg.ncur = tg.t->nconfigs;
    request_ctx(kr, &tg.inherited);
    return prepare_configs(kr, it, res, &tg, incremental);
}

/* A broker resource (@target from broker_target): this broker's dynamic configs, inheriting
 * from the cluster default and the file, or the cluster default, inheriting from the file. */
static int prepare_broker(sf_kreq_t *kr, sf_admin_item_t *it, const config_resource_t *res,
                          sf_admin_target_t target, int incremental) {
    const sf_cluster_snapshot_t *snap = kr->snap;
    config_target_t tg;
    memset(&tg, 0, sizeof(tg));
    tg.target = it->target = target;
    request_ctx(kr, &tg.inherited);
    tg.inherited.broker_dyn = NULL;
    tg.inherited.nbroker_dyn = 0;
    if (target == SF_ADMIN_TARGET_DEFAULT) {
        tg.cur = snap ? snap->default_configs : NULL;
        tg.ncur = snap ? snap->ndefault_configs : 0;
        tg.inherited.default_dyn = NULL;
        tg.inherited.ndefault_dyn = 0;
        it->topic = strdup(SF_CLUSTER_DEFAULT_ENTITY);
    } else {
        tg.cur = snap ? snap->broker_configs : NULL;
        tg.ncur = snap ? snap->nbroker_configs : 0;
        char id[16];
        snprintf(id, sizeof(id), "%d", (int)sf_broker_cfg(kr->b)->broker_id);
        it->topic = strdup(id);
    }
    if (!it->topic)
        return sf_admin_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
    return prepare_configs(kr, it, res, &tg, incremental);
}

static void alter_respond(sf_admin_op_t *op) {
    sf_kreq_t *kr = op->kr;
    int i;
    /* The two responses have the same layout, but are separate types of the codec. */
    if (kr->api_key == SF_PROTO_API_IncrementalAlterConfigs) {
        sf_proto_IncrementalAlterConfigsResponse_t resp;
        sf_proto_IncrementalAlterConfigsResponse_init(&resp);
        resp.Responses = calloc((size_t)op->nitems + 1, sizeof(*resp.Responses));
        for (i = 0; resp.Responses && i < op->nitems; i++) {
            resp.Responses[i].ErrorCode = op->items[i].error;
            resp.Responses[i].ErrorMessage = sf_slice_cstr(op->items[i].message);
            resp.Responses[i].ResourceType = op->items[i].resource_type;
            resp.Responses[i].ResourceName = op->items[i].resource_name;
        }
        resp.ResponsesCount = resp.Responses ? op->nitems : 0;
        if (resp.Responses)
            sf_kreq_respond(kr, &resp);
        else
            sf_kreq_close(kr, "no memory for the response");
        free(resp.Responses);
    } else {
        sf_proto_AlterConfigsResponse_t resp;
        sf_proto_AlterConfigsResponse_init(&resp);
        resp.Responses = calloc((size_t)op->nitems + 1, sizeof(*resp.Responses));
        for (i = 0; resp.Responses && i < op->nitems; i++) {
            resp.Responses[i].ErrorCode = op->items[i].error;
            resp.Responses[i].ErrorMessage = sf_slice_cstr(op->items[i].message);
            resp.Responses[i].ResourceType = op->items[i].resource_type;
            resp.Responses[i].ResourceName = op->items[i].resource_name;
        }
        resp.ResponsesCount = resp.Responses ? op->nitems : 0;
        if (resp.Responses)
            sf_kreq_respond(kr, &resp);
        else
            sf_kreq_close(kr, "no memory for the response");
        free(resp.Responses);
    }
}

/* Start the ZooKeeper write of a prepared item. */
static void alter_write(sf_kreq_t *kr, sf_cluster_t *cl, sf_admin_item_t *it, int incremental) {
    const char *how = incremental ? "changing" : "replacing";
    if (it->target == SF_ADMIN_TARGET_TOPIC) {
        sf_log(SF_LOG_INFO, "ADMIN", "%s: %s the config of %s (%d override(s))",
               sf_kreq_peer(kr), how, it->topic, it->nconfigs);
        sf_admin_started(it, sf_cluster_topic_config_set(cl, it->topic, it->configs,
                                                         it->nconfigs, sf_admin_done, it));
        return;
    }
    if (it->target == SF_ADMIN_TARGET_DEFAULT)
        sf_log(SF_LOG_INFO, "ADMIN", "%s: %s the cluster-wide dynamic broker config (%d "
               "setting(s))", sf_kreq_peer(kr), how, it->nconfigs);
    else
        sf_log(SF_LOG_INFO, "ADMIN", "%s: %s the dynamic config of broker %s (%d setting(s))",
               sf_kreq_peer(kr), how, it->topic, it->nconfigs);
    sf_admin_started(it, sf_cluster_broker_config_set(cl, it->topic, it->configs, it->nconfigs,
                                                      sf_admin_done, it));
}

static void alter_run(sf_kreq_t *kr, int incremental, const config_resource_t *res, int32_t nres,
                      bool validate_only) {
    sf_cluster_t *cl = sf_broker_cluster(kr->b);
    sf_admin_key_t *keys = calloc((size_t)nres + 1, sizeof(*keys));
    char *dup = calloc((size_t)nres + 1, 1);
    sf_admin_op_t *op = sf_admin_op_new(kr, SF_ADMIN_CONFIGS, nres, alter_respond);
    int nentity[SF_ADMIN_TARGET_DEFAULT + 1] = {0};
    sf_admin_target_t target;
    const char *why;
    int i;

    if (!keys || !dup || !op) {
        free(keys);
        free(dup);
        if (op)
            sf_admin_op_free(op);
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    op->validate_only = validate_only;
    for (i = 0; i < nres; i++) {
        op->items[i].resource_type = res[i].ResourceType;
        op->items[i].resource_name = res[i].ResourceName;
        keys[i].tag = res[i].ResourceType;
        keys[i].name = res[i].ResourceName;
        keys[i].idx = i;
    }
    sf_admin_find_dups(keys, nres, dup);
    /* One resource per broker entity ("1" and "01" name the same one). */
    for (i = 0; i < nres; i++)
        if (res[i].ResourceType == RESOURCE_BROKER && !dup[i] &&
            broker_target(kr, res[i].ResourceName, &target, NULL))
            nentity[target]++;
    for (i = 0; i < nres; i++) {
        sf_admin_item_t *it = &op->items[i];
        if (dup[i]) {
            sf_admin_fail(it, SF_KERR_INVALID_REQUEST, "the resource is named more than once");
            continue;
        }
        if (res[i].ResourceType == RESOURCE_BROKER) {
            if (!broker_target(kr, res[i].ResourceName, &target, &why)) {
                sf_admin_fail(it, SF_KERR_INVALID_REQUEST, why);
                continue;
            }
            if (nentity[target] > 1) {
                sf_admin_fail(it, SF_KERR_INVALID_REQUEST, "the resource is named more than once");
                continue;
            }
            if (!prepare_broker(kr, it, &res[i], target, incremental))
                continue;
        } else if (res[i].ResourceType != RESOURCE_TOPIC) {
            sf_admin_fail(it, SF_KERR_INVALID_REQUEST,
                          sf_kreq_printf(kr, "resource type %d cannot be altered; only topics (2) "
                                             "and brokers (4) can", res[i].ResourceType));
            continue;
        } else if (!prepare_topic(kr, it, &res[i], incremental)) {
            continue;
        }
        if (validate_only)
            continue;
        if (!cl)
            sf_admin_fail(it, SF_KERR_NOT_CONTROLLER,
                          "the broker is not registered in ZooKeeper yet");
        else
            alter_write(kr, cl, it, incremental);
    }
    free(keys);
    free(dup);
    sf_admin_run(op, 0x7fffffff);
}

void sf_kapi_AlterConfigs(sf_kreq_t *kr, void *msg) {
    const sf_proto_AlterConfigsRequest_t *areq = msg;
    config_resource_t *res = sf_kreq_alloc(kr, (size_t)areq->ResourcesCount, sizeof(*res));
    int i, j;
    if (!res)
        goto nomem;
    /* As the incremental form: every given key SET, the rest removed (incremental = 0). */
    for (i = 0; i < areq->ResourcesCount; i++) {
        const sf_proto_AlterConfigsRequest_AlterConfigsResource_t *ar = &areq->Resources[i];
        res[i].ResourceType = ar->ResourceType;
        res[i].ResourceName = ar->ResourceName;
        res[i].ConfigsCount = ar->ConfigsCount;
        res[i].Configs = sf_kreq_alloc(kr, (size_t)ar->ConfigsCount, sizeof(*res[i].Configs));
        if (!res[i].Configs)
            goto nomem;
        for (j = 0; j < ar->ConfigsCount; j++) {
            res[i].Configs[j].Name = ar->Configs[j].Name;
            res[i].Configs[j].ConfigOperation = SF_PROTO_CONFIG_OP_SET;
            res[i].Configs[j].Value = ar->Configs[j].Value;
        }
    }
    alter_run(kr, 0, res, areq->ResourcesCount, areq->ValidateOnly);
    return;
nomem:
    sf_kreq_close(kr, "no memory for the request");
}

void sf_kapi_IncrementalAlterConfigs(sf_kreq_t *kr, void *msg) {
    const sf_proto_IncrementalAlterConfigsRequest_t *ireq = msg;
    alter_run(kr, 1, ireq->Resources, ireq->ResourcesCount, ireq->ValidateOnly);
}
