#!/bin/bash
sed -n '100,149p' /app/app.log > /app/window.log
