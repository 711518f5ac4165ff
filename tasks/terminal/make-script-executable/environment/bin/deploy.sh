#!/bin/bash
echo "deploying ${1:-staging}"
