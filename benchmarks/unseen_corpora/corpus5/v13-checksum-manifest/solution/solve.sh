#!/bin/bash
cd /app && sha256sum dist/* > SHA256SUMS
