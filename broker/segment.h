#ifndef SF_SEGMENT_H
#define SF_SEGMENT_H
#endif
