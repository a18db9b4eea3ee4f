#include "tls.h"
typedef int sf_tls_placeholder_t;
