/* SPDX-License-Identifier: BSD-3-Clause */
#include "ftcoll/error.h"

struct error_entry {
    const char *name;
    const char *text;
};

/* Indexed by -err. */
static const struct error_entry error_table[FTC_ERROR_COUNT] = {
    {"FTC_OK", "success"},
    {"FTC_EINVAL", "invalid argument"},
    {"FTC_ENOMEM", "out of memory"},
    {"FTC_EOVERFLOW", "element count times element size is too large"},
    {"FTC_EMISMATCH", "operation not defined for this datatype, or peers "
                      "started the collective with different arguments"},
    {"FTC_ENOTSUP", "not supported by this build"},
    {"FTC_EROOT_FAILED", "the root failed; this process has no result"},
    {"FTC_ETOO_MANY_FAILURES", "more failures than the collective tolerates"},
    {"FTC_EPEER_FAILED", "a peer failed during a non-fault-tolerant collective"},
    {"FTC_EEXCLUDED", "this process was declared failed by the group"},
    {"FTC_ECANCELED", "canceled: the context or group was destroyed"},
    {"FTC_ETRANSPORT", "the transport refused the request"},
    {"FTC_ETRUNCATED", "message truncated"},
    {"FTC_ECHECKSUM", "message checksum mismatch (corrupted)"},
    {"FTC_EVERSION", "not an ftcoll message, or an unknown wire version"},
    {"FTC_EFOREIGN", "message from another job (job token mismatch)"},
    {"FTC_ESTALE", "message for an operation that already ended"},
    {"FTC_EBADMSG", "malformed message"},
    {"FTC_EBUSY", "operations of the group are still in flight here"},
    {"FTC_EPEER_INVALID", "a peer could not start this operation: its call "
                          "was refused (invalid arguments there)"},
    {"FTC_ETIMEDOUT", "the operation's timeout passed before it delivered "
                      "(a member never started it, or is stuck)"},
    {"FTC_EAUTH", "message failed authentication (forged, altered, or "
                  "another job key)"},
    {"FTC_EPROC_FAILED", "an operation involving a failed process could not "
                         "complete"},
    {"FTC_EINVALIDATED", "the group was invalidated"},
};

const char *ftc_strerror(int err)
{
    if (err > 0 || err <= -FTC_ERROR_COUNT)
        return "unknown ftcoll error";
    return error_table[-err].text;
}

const char *ftc_err_name(int err)
{
    if (err > 0 || err <= -FTC_ERROR_COUNT)
        return "FTC_E?";
    return error_table[-err].name;
}
