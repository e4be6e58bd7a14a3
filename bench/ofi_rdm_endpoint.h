/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An FI_EP_RDM endpoint opened the way the libfabric backend opens its
 * own (backends/libfabric/transport.c): FI_AV_TABLE, one CQ polled
 * without a wait object, FI_CONTEXT2 contexts, one buffer registered when
 * the provider wants local registration. For the tools that talk
 * libfabric beside the backend: ftcoll-bench's raw ping-pong
 * (bench_transport_ofi.c) and the stranger (ftcoll_foreign_ofi.c).
 */
#ifndef FTC_BENCH_OFI_RDM_ENDPOINT_H
#define FTC_BENCH_OFI_RDM_ENDPOINT_H

#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

typedef struct ofi_rdm_spec {
    const char *provider;   /* NULL: libfabric's choice (FI_PROVIDER) */
    uint32_t addr_format;   /* 0: any */
    const char *node;       /* NULL: none; else bound to it (FI_SOURCE) */
    size_t av_count;
    size_t cq_size;
    void *buf;              /* registered if the provider wants FI_MR_LOCAL */
    size_t len;
    uint64_t access;        /* fi_mr_reg access flags for buf */
} ofi_rdm_spec_t;

typedef struct ofi_rdm {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    struct fid_mr *mr;
    void *desc;             /* buf's descriptor, NULL if not registered */
} ofi_rdm_t;

/* The address format the provider s would be opened with, asked of
 * fi_getinfo alone: 0 and *fmt, or a negative fi_errno. Opening an
 * endpoint just to look (shm 1.17 with a sockaddr node) and closing it
 * again made the next fi_enable crash inside the provider. */
int ofi_rdm_addr_format(const ofi_rdm_spec_t *s, uint32_t *fmt);

/* Open r (zeroed by the caller) as s says. 0, or a negative fi_errno with
 * err saying which step failed and why ("fi_domain: ..."); either way
 * ofi_rdm_close(r) releases what was opened. */
int ofi_rdm_open(ofi_rdm_t *r, const ofi_rdm_spec_t *s, char *err,
                 size_t errlen);

void ofi_rdm_close(ofi_rdm_t *r);

#endif
