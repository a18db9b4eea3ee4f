#include "segment.h"
typedef int sf_segment_placeholder_t;
