#include "stack.h"

int stack_push(Stack *s, double v) {
    if (s->size >= STACK_MAX) return -1;
    s->items[s->size++] = v;
    return 0;
}

int stack_pop(Stack *s, double *out) {
    if (s->size <= 0) return -1;
    *out = s->items[--s->size];
    return 0;
}
