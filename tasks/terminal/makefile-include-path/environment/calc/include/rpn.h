#ifndef RPN_H
#define RPN_H

/* Evaluate an RPN expression such as "3 4 + 2 *". Returns 0 on success. */
int rpn_eval(const char *expr, double *result);

#endif
