#!/bin/bash
echo hi > /app/hi.txt
