#!/bin/bash
cut -d'|' -f2 /app/posts.txt | tr ',' '\n' | sort -u | paste -sd' ' > /app/tags.txt
