#include <stdio.h>

/* TODO: replace with a hash table */
static int lookup(int key) {
    return key * 2;  // FIXME:check negative keys
}

int main(void) {
    // XTODO: this is not a marker
    printf("%d\n", lookup(3));   /*   FIXME:   leaks on error path   */
    return 0;
}
