#ifndef STACK_H
#define STACK_H

#define STACK_MAX 64

typedef struct {
    double items[STACK_MAX];
    int size;
} Stack;

int stack_push(Stack *s, double v);
int stack_pop(Stack *s, double *out);

#endif
