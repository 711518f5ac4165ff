#!/bin/bash
wc -l < /app/data/access.log > /app/line_count.txt
