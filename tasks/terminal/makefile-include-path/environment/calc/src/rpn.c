#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rpn.h"
#include "stack.h"

int rpn_eval(const char *expr, double *result) {
    Stack st = {{0}, 0};
    char buf[512];
    strncpy(buf, expr, sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    for (char *tok = strtok(buf, " \t"); tok; tok = strtok(NULL, " \t")) {
        double a, b;
        if (strcmp(tok, "sqrt") == 0) {
            if (stack_pop(&st, &a)) return 1;
            if (stack_push(&st, sqrt(a))) return 1;
        } else if (strlen(tok) == 1 && strchr("+-*/^", tok[0])) {
            if (stack_pop(&st, &b) || stack_pop(&st, &a)) return 1;
            double r = 0;
            switch (tok[0]) {
                case '+': r = a + b; break;
                case '-': r = a - b; break;
                case '*': r = a * b; break;
                case '/': r = a / b; break;
                case '^': r = pow(a, b); break;
            }
            if (stack_push(&st, r)) return 1;
        } else {
            char *end;
            double v = strtod(tok, &end);
            if (*end != '\0') return 1;
            if (stack_push(&st, v)) return 1;
        }
    }
    if (st.size != 1) return 1;
    *result = st.items[0];
    return 0;
}
