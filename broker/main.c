#include "config.h"

#include <stdio.h>

int main(void) {
    printf("streamflowd %s\n", PACKAGE_VERSION);
    return 0;
}
