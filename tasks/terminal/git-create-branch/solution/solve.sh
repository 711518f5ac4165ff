#!/bin/bash
cd /app && git checkout -b feature/login main
