/* DescribeConfigs, AlterConfigs and IncrementalAlterConfigs: topic configs (topiccfg.c) in
 * ZooKeeper, and the broker's own settings. */
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

/* The configs of a topic (@t) or of the broker (@t NULL: each topic config's broker
 * setting, read-only until dynamic broker configs exist). */
static int describe_resource(sf_kreq_t *kr, const sf_proto_DescribeConfigsRequest_t *dreq,
                             const sf_proto_DescribeConfigsRequest_DescribeConfigsResource_t *res,
                             const sf_cluster_topic_t *t,
                             sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *rr) {
    const sf_topiccfg_ctx_t *ctx = sf_broker_topiccfg(kr->b);
    size_t n, i;
    const sf_topiccfg_def_t *defs = sf_topiccfg_all(&n);
    rr->Configs = sf_kreq_alloc(kr, n, sizeof(*rr->Configs));
    if (!rr->Configs)
        return SF_ERR_NOMEM;
    for (i = 0; i < n; i++) {
        sf_topiccfg_value_t vals[MAX_SYNONYMS];
        const char *name = t ? defs[i].name : defs[i].synonyms[0].name;
        int nv;
        if (!name || !key_wanted(res, name))
            continue;
        nv = sf_topiccfg_resolve(ctx, t, &defs[i], vals, MAX_SYNONYMS);
        if (describe_entry(kr, dreq, &defs[i], name, t == NULL, vals, nv,
                           &rr->Configs[rr->ConfigsCount++]) != SF_OK)
            return SF_ERR_NOMEM;
    }
    return SF_OK;
}

void sf_kapi_DescribeConfigs(sf_kreq_t *kr, void *msg) {
    const sf_proto_DescribeConfigsRequest_t *dreq = msg;
    const sf_brokercfg_t *cfg = sf_broker_cfg(kr->b);
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
        char *name = sf_kreq_str(kr, res->ResourceName), id[16];
        const sf_cluster_topic_t *t = NULL;
        sf_proto_DescribeConfigsResponse_DescribeConfigsResult_init(rr);
        rr->ResourceType = res->ResourceType;
        rr->ResourceName = res->ResourceName;
        snprintf(id, sizeof(id), "%d", cfg->broker_id);
        if (res->ResourceType == RESOURCE_TOPIC && !(t = sf_kreq_topic(kr, name))) {
            rr->ErrorCode = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
            rr->ErrorMessage = sf_slice_cstr("the topic does not exist");
        } else if (res->ResourceType == RESOURCE_BROKER && (!name || (name[0] && strcmp(name, id)))) {
            rr->ErrorCode = SF_KERR_INVALID_REQUEST;
            rr->ErrorMessage = sf_slice_cstr("not this broker's id");
        } else if (res->ResourceType != RESOURCE_TOPIC && res->ResourceType != RESOURCE_BROKER) {
            rr->ErrorCode = SF_KERR_INVALID_REQUEST;
            rr->ErrorMessage = sf_slice_cstr("only topic and broker resources are described");
        } else if (describe_resource(kr, dreq, res, t, rr) != SF_OK) {
            goto nomem;
        }
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

static int config_find(const sf_cluster_config_entry_t *cfgs, int n, const char *name) {
    int i;
    for (i = 0; i < n; i++)
        if (!strcmp(cfgs[i].name, name))
            return i;
    return -1;
}

/* The new value of one change, or NULL to unset; sets it->error when the change is bad.
 * Returns a malloc'd value in *@out (NULL: unset). */
static int change_value(sf_kreq_t *kr, sf_admin_item_t *it, const config_change_t *ch,
                        const char *name, const char *value, const char *current,
                        const sf_cluster_topic_t *t, int incremental, char **out) {
    const sf_topiccfg_def_t *def = sf_topiccfg_find(name);
    char why[160], buf[256];
    *out = NULL;
    if (!def)
        return sf_admin_fail(it, SF_KERR_INVALID_CONFIG,
                             sf_kreq_printf(kr, "unknown topic config %.200s", name));
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
        /* The list to edit: the override, else the topic's effective value (as Kafka). */
        if (!current)
            current = sf_topiccfg_get(sf_broker_topiccfg(kr->b), t, name, buf, sizeof(buf));
        if (!(*out = sf_topiccfg_list_edit(current, value,
                                           ch->ConfigOperation == SF_PROTO_CONFIG_OP_SUBTRACT)))
            return sf_admin_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
        break;
    default:
        return sf_admin_fail(it, SF_KERR_INVALID_REQUEST,
                             sf_kreq_printf(kr, "unknown config operation %d for %s",
                                            ch->ConfigOperation, name));
    }
    if (*out && !sf_topiccfg_validate(def, *out, why, sizeof(why))) {
        sf_admin_fail(it, SF_KERR_INVALID_CONFIG,
                      sf_kreq_printf(kr, "invalid value \"%.100s\" for %s: %s", *out, name, why));
        free(*out);
        *out = NULL;
        return 0;
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

/* Apply @res's changes to a copy of the topic's overrides (incremental) or to an empty set
 * (AlterConfigs replaces the whole set) into it->configs. Returns 1 when the set is ready. */
static int prepare_topic(sf_kreq_t *kr, sf_admin_item_t *it, const config_resource_t *res,
                         int incremental) {
    const sf_cluster_topic_t *t;
    sf_cluster_config_entry_t *cfgs;
    sf_admin_key_t *keys;
    int n = 0, j, ok = 1;

    if (!(it->topic = sf_slice_strdup(res->ResourceName)))
        return sf_admin_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
    if (!(t = sf_kreq_topic(kr, it->topic)))
        return sf_admin_fail(it, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION, "the topic does not exist");
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
    cfgs = calloc((size_t)(incremental ? t->nconfigs : 0) + (size_t)res->ConfigsCount + 1,
                  sizeof(*cfgs));
    if (!cfgs)
        return sf_admin_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
    /* Overrides StreamFlow does not know (written by other tools) are kept as they are. */
    for (j = 0; incremental && j < t->nconfigs && ok; j++) {
        if (!t->configs[j].name || !t->configs[j].value)
            continue;
        cfgs[n].name = strdup(t->configs[j].name);
        cfgs[n].value = strdup(t->configs[j].value);
        ok = cfgs[n].name && cfgs[n].value;
        n++;
    }
    if (!ok)
        sf_admin_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
    for (j = 0; ok && j < res->ConfigsCount; j++) {
        const config_change_t *ch = &res->Configs[j];
        char *name = sf_kreq_str(kr, ch->Name), *value = sf_kreq_str(kr, ch->Value), *nv;
        int at;
        if (!name || strlen(name) != (size_t)ch->Name.len) {
            ok = sf_admin_fail(it, SF_KERR_INVALID_CONFIG, "bad config name");
            break;
        }
        at = config_find(cfgs, n, name);
        if (!(ok = change_value(kr, it, ch, name, value, at >= 0 ? cfgs[at].value : NULL, t,
                                incremental, &nv)))
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

static void alter_run(sf_kreq_t *kr, int incremental, const config_resource_t *res, int32_t nres,
                      bool validate_only) {
    sf_cluster_t *cl = sf_broker_cluster(kr->b);
    sf_admin_key_t *keys = calloc((size_t)nres + 1, sizeof(*keys));
    char *dup = calloc((size_t)nres + 1, 1);
    sf_admin_op_t *op = sf_admin_op_new(kr, SF_ADMIN_CONFIGS, nres, alter_respond);
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
    for (i = 0; i < nres; i++) {
        sf_admin_item_t *it = &op->items[i];
        if (dup[i])
            sf_admin_fail(it, SF_KERR_INVALID_REQUEST, "the resource is named more than once");
        else if (res[i].ResourceType == RESOURCE_BROKER)
            sf_admin_fail(it, SF_KERR_INVALID_REQUEST,
                          "broker configs are read-only; change streamflowd.conf");
        else if (res[i].ResourceType != RESOURCE_TOPIC)
            sf_admin_fail(it, SF_KERR_INVALID_REQUEST,
                          sf_kreq_printf(kr, "resource type %d cannot be altered; only topics (2) "
                                             "can", res[i].ResourceType));
        else if (!prepare_topic(kr, it, &res[i], incremental) || validate_only)
            continue;
        else if (!cl)
            sf_admin_fail(it, SF_KERR_NOT_CONTROLLER, "the broker is not registered in ZooKeeper yet");
        else {
            sf_log(SF_LOG_INFO, "ADMIN", "%s: %s the config of %s (%d override(s))",
                   sf_kreq_peer(kr), incremental ? "changing" : "replacing", it->topic,
                   it->nconfigs);
            sf_admin_started(it, sf_cluster_topic_config_set(cl, it->topic, it->configs,
                                                             it->nconfigs, sf_admin_done, it));
        }
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
