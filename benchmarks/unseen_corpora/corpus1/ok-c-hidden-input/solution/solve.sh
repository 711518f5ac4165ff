#!/bin/bash
cat > /app/wc.c <<'EOF'
#include <stdio.h>
#include <ctype.h>
int main(void){int c,in=0;long n=0;while((c=getchar())!=EOF){if(isspace(c))in=0;else if(!in){in=1;n++;}}printf("%ld\n",n);return 0;}
EOF
