#!/bin/sh
# legacy launcher
exec gunicorn --bind 0.0.0.0:8137 --workers 6 shop.wsgi:app
