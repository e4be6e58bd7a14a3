/* SPDX-License-Identifier: BSD-3-Clause */
/* ftc_version: what this library is, as opposed to what a caller was
 * compiled against (the FTC_VERSION_* macros). */
#include <stddef.h>

#include "ftcoll/version.h"

#define FTC_STR_(x) #x
#define FTC_STR(x) FTC_STR_(x)

const char *ftc_version(uint32_t *major, uint32_t *minor, uint32_t *patch)
{
    if (major != NULL)
        *major = FTC_VERSION_MAJOR;
    if (minor != NULL)
        *minor = FTC_VERSION_MINOR;
    if (patch != NULL)
        *patch = FTC_VERSION_PATCH;
    return FTC_STR(FTC_VERSION_MAJOR) "." FTC_STR(FTC_VERSION_MINOR) "." FTC_STR(
        FTC_VERSION_PATCH);
}
